package service

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// hangingTier is a Tier that does not answer: every call returns only when
// its context is done, with the context's error (as a Tier must).
type hangingTier struct{}

func (hangingTier) Get(ctx context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	<-ctx.Done()
	return dst, 0, false, ctx.Err()
}

func (hangingTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	<-ctx.Done()
	return ctx.Err()
}

func (hangingTier) Delete(ctx context.Context, key []byte) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// A POST of many entries with a Tier that does not answer must still be
// answered in about TierTimeout, not one TierTimeout per entry (100 entries:
// 100 x TierTimeout; an 8 MiB body holds ~400k entries: hours).
func TestPostHangingTierBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: hangingTier{},
			TierTimeout: 100 * time.Millisecond, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var b strings.Builder
		b.WriteByte('[')
		for i := range 100 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"k%d","entry":%d}`, i, i)
		}
		b.WriteByte(']')
		req := httptest.NewRequest("POST", "/v1/entries", strings.NewReader(b.String()))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		start := time.Now()
		s.ServeHTTP(w, req)
		took := time.Since(start)
		if w.Code != 200 {
			t.Fatalf("POST: %d %s", w.Code, w.Body)
		}
		if took > 2*s.Options().TierTimeout {
			t.Fatalf("a 100-entry POST with a hanging Tier took %v (TierTimeout %v): its Tier writes are not bounded as a whole",
				took, s.Options().TierTimeout)
		}
	})
}

// A GET whose client went away while the Tier was being asked is no failure
// of the Tier: it must not count in tier.errors (cachekit_tier_errors_total),
// as the redis ByteTier itself does not count it in L2Errors.
func TestClientCancelIsNoTierError(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: hangingTier{},
		TierTimeout: time.Minute, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gone, cancel := context.WithCancel(context.Background())
	cancel() // the client went away
	req := httptest.NewRequest("GET", "/v1/entries/k", nil).WithContext(gone)
	s.ServeHTTP(httptest.NewRecorder(), req)
	if st := s.Stats().Tier; st.Errors != 0 {
		t.Fatalf("tier stats after a GET whose client went away: %+v; want no error (the Tier did not fail)", *st)
	}
}

// A value in the Tier that is not in the server's stored form (an empty
// value, or one written by another ByteTier user of the prefix) is no bug
// of the server and no direct Store write: the docs allow a 500 for nothing
// else. It must read as a miss (404), and not count as a tier hit.
func TestForeignTierValue(t *testing.T) {
	for _, v := range []string{"", "hello", "\x03\xffshort"} {
		tier := &mapTier{m: map[string][]byte{"k": []byte(v)}, ttl: map[string]time.Duration{}}
		s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/v1/entries/k", nil))
		st := s.Stats().Tier
		s.Close()
		if w.Code != 404 || st.Hits != 0 {
			t.Errorf("GET of a Tier value %q not in the stored form: %d %s, tier stats %+v; want 404 and no hit", v, w.Code, strings.TrimSpace(w.Body.String()), *st)
		}
	}
}
