package service

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The rate limit of the tier's warnings must not silence them when the
// wall clock is set back (NTP, a resumed VM): the last warning then looks
// as if it came from the future, and the next ones were dropped until the
// clock caught up with it.
func TestTierWarningAfterClockSetBack(t *testing.T) {
	var logs lockedBuffer
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}, fail: true}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The last warning was logged an hour ahead of the wall clock's time
	// now: the clock has been set back by an hour since.
	s.lastLog[logTierGet].Store(time.Now().Add(time.Hour).UnixNano())
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/v1/entries/k", nil))
	if w.Code != 404 {
		t.Fatalf("GET with the tier down: %d %s", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "second tier: get failed") {
		t.Fatalf("the tier's failure was not logged after the clock was set back; logs: %q", logs.String())
	}
	// The limit still holds from there: the next failure, within the
	// second, is not logged.
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/entries/k", nil))
	if n := strings.Count(logs.String(), "second tier: get failed"); n != 1 {
		t.Fatalf("%d warnings within a second, want 1; logs: %q", n, logs.String())
	}
}
