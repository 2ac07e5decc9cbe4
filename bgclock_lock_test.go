package cachekit

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// ctWaitGoroutine polls the goroutine dump until one goroutine's stack
// contains every string of want (states that synctest cannot wait for:
// goroutines blocked on mutexes).
func ctWaitGoroutine(t *testing.T, want ...string) {
	t.Helper()
	limit := time.Now().Add(60 * time.Second) // a deadlock guard only
	for time.Now().Before(limit) {
		buf := make([]byte, 1<<20)
		s := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(s, "\n\n") {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(g, w)
			}
			if ok {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("no goroutine with %q in its stack", want)
}

// While the background goroutine waits for the maintenance lock (held by
// another goroutine's long pass, or by a Clear of a large cache), it cannot
// refresh the cached clock: readers must then take the time themselves, as
// they do while it runs OnEvict, or Get returns entries long past their TTL.
func TestCachedClockRunsWhileBackgroundWaitsForLock(t *testing.T) {
	h := Must(Options[int, int]{})
	defer h.Close()
	c := h.c
	h.SetWithTTL(0, 0, time.Hour) // starts the fast clock
	c.mu.Lock()                   // stands for a long Clear of a large cache
	// The background goroutine's next tick waits for the lock.
	ctWaitGoroutine(t, "sync.Mutex.Lock", ").run(")
	h.SetWithTTL(1, 1, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	v, ok := h.Get(1)
	c.mu.Unlock()
	if ok {
		t.Errorf("Get(1) = %d, true 50ms after a 10ms TTL, while the background goroutine waited for the maintenance lock", v)
	}
}
