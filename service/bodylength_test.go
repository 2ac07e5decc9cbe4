package service

import (
	"math"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// The Content-Length a client declares is no more than a claim: with a
// large MaxBodyBytes (or MaxValueBytes), the server must not allocate the
// declared length before the body has arrived. It did: a declared length
// near MaxInt64 overflowed the buffer's capacity (a panic: a 500), and a
// declared 100 GiB (with a larger MaxBodyBytes) was allocated at once:
// past the machine's memory, a fatal error for the whole process (not a
// panic the handler recovers), from one request line and a header.
func TestDeclaredBodyLengthNotAllocated(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, MaxBodyBytes: math.MaxInt64, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	post := func(contentLength int64) int {
		req := httptest.NewRequest("POST", "/v1/entries", strings.NewReader(`{"id":"a","entry":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = contentLength
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code
	}

	if code := post(math.MaxInt64); code == 500 || s.Stats().Panics != 0 {
		t.Errorf("a POST declaring %d bytes: %d, %d panics", int64(math.MaxInt64), code, s.Stats().Panics)
	}

	const declared = 1 << 30
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code := post(declared)
	runtime.ReadMemStats(&after)
	if code != 200 {
		t.Errorf("a POST declaring %d bytes: %d", declared, code)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc >= declared {
		t.Errorf("a POST of a 21-byte body declaring %d bytes allocated %d bytes", declared, alloc)
	}
}
