package service

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"
)

// A MaxTTL shorter than the default TTL, with no DefaultTTL given, is no
// conflict: the default TTL the user did not choose is fitted to MaxTTL
// (as MaxValueBytes is fitted to MaxBytes). New refused it ("default-ttl
// 10m0s exceeds max-ttl 5m0s"), and so did cachekit serve --max-ttl 5m.
// A DefaultTTL that was given is still checked against MaxTTL.
func TestShortMaxTTLFitsDefaultTTL(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxTTL: 5 * time.Minute, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("New with MaxTTL 5m and no DefaultTTL: %v", err)
	}
	defer s.Close()
	if got := s.Options().DefaultTTL; got != 5*time.Minute {
		t.Errorf("DefaultTTL in effect %v, want 5m0s (fitted to MaxTTL)", got)
	}
	// The flags' defaults: DefaultOptions must leave DefaultTTL to New.
	o := DefaultOptions()
	o.MaxBytes, o.MaxTTL, o.Logger = 1<<20, time.Minute, quietLogger()
	s2, err := New(o)
	if err != nil {
		t.Fatalf("New(DefaultOptions() with MaxTTL 1m): %v", err)
	}
	s2.Close()
	if _, err := New(Options{MaxBytes: 1 << 20, MaxTTL: 5 * time.Minute, DefaultTTL: 10 * time.Minute, Logger: quietLogger()}); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("New with DefaultTTL 10m over MaxTTL 5m: %v, want ErrInvalidOptions", err)
	}
}

// countingReader is an endless body (a chunked one, of unknown length)
// that counts the bytes read from it.
type countingReader struct{ n int }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += len(p)
	return len(p), nil
}

// A body of unknown length over the limit is refused once one byte more
// than the limit has arrived: the package documentation bounds a request's
// body in memory by MaxValueBytes (PUT) or MaxBodyBytes (POST). readBody
// doubled its buffer and filled it, reading and allocating up to about
// twice the limit before answering 413.
func TestUnknownLengthBodyBoundedByLimit(t *testing.T) {
	for _, limit := range []int{1, 100, 1000, 5000, 100_000, 1 << 20} {
		for _, start := range []int{0, 1, 100} {
			r := &countingReader{}
			dst := make([]byte, start) // as PUT: the value header first
			got, err := readBody(r, dst, limit, -1)
			if !errors.Is(err, errTooLarge) {
				t.Fatalf("limit %d: %v, want errTooLarge", limit, err)
			}
			if r.n > limit+1 || cap(got) > start+limit+1 {
				t.Errorf("limit %d, %d bytes before the body: read %d bytes into a buffer of %d before refusing the body; want at most %d",
					limit, start, r.n, cap(got), limit+1)
			}
		}
	}

	const limit = 300_000
	s, err := New(Options{MaxBytes: 8 << 20, MaxValueBytes: limit, MaxBodyBytes: limit, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, method := range []string{"PUT", "POST"} {
		r := &countingReader{}
		req := httptest.NewRequest(method, "/v1/entries/k", r)
		if method == "POST" {
			req = httptest.NewRequest(method, "/v1/entries", r)
			req.Header.Set("Content-Type", "application/json")
		}
		req.ContentLength = -1
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 413 {
			t.Errorf("%s of an endless body: %d, want 413", method, w.Code)
		}
		if r.n > limit+1 {
			t.Errorf("%s of an endless body: read %d bytes before answering 413 (limit %d)", method, r.n, limit)
		}
	}
}
