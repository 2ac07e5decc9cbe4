package cachekit

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestFastClockStartsBeforeReportWithFullQueue: a Set with a TTL that
// replaces an entry while the write queue is full reports the replaced
// value before it can queue its record. The fast clock must start before
// that report, which may take any time: if no entry with a TTL existed
// before (the cached clock refreshed once a second), readers would go on
// returning the new entry long after its deadline while the callback runs.
// removedThen does it for both branches; TestFastClockStartsBefore-
// ReplacedCallback covers only the one with room in the queue (this test
// fails if the noteTTL call is moved into that branch).
func TestFastClockStartsBeforeReportWithFullQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, int]
		var inCallback atomic.Bool
		var seen struct {
			ok  bool
			ran bool
		}
		c = ctNew(t, Options[int, int]{
			MaxEntries: 1000,
			OnEvict: func(k, v int, cause Cause) {
				if k != 0 || cause != CauseReplaced || !inCallback.CompareAndSwap(false, true) {
					return
				}
				// A slow callback: the entry written with a TTL of 10ms
				// expires meanwhile.
				time.Sleep(500 * time.Millisecond)
				_, seen.ok = c.Get(0)
				seen.ran = true
			},
		})
		ctPin(c)
		c.Set(0, 0)
		// Fill the write queue while holding the maintenance lock, so that
		// no writer drains it; nothing else drains it until time passes.
		c.c.mu.Lock()
		for k := 1; c.c.writes.Len() < c.c.writes.Cap(); k++ {
			c.Set(k, k)
		}
		c.c.mu.Unlock()
		c.SetWithTTL(0, 1, 10*time.Millisecond)
		if !seen.ran {
			t.Fatal("OnEvict did not report the replaced value of key 0")
		}
		if seen.ok {
			t.Error("Get(0) 500ms after SetWithTTL(0, 1, 10ms), from the OnEvict call reporting the value it replaced: found; want expired")
		}
		c.Close()
	})
}
