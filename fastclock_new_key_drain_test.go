package cachekit

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A SetWithTTL of a new key (nothing replaced) that found the write queue
// full published its entry in the index, then drained the queue itself
// (afterWrite, drainFor: a whole pass) or waited for whoever held c.mu,
// and started the fast clock only once its record was queued. With no
// entry with a TTL before, the background goroutine refreshed the cached
// clock once a second, so for as long as the drain took, Get and Peek
// compared the new entry's deadline with the time of the write and
// returned it long after its TTL (here 500ms after a TTL of 10ms). A Set
// that replaces an entry already started the fast clock before anything
// that may block (TestFastClockStartsBeforeReportWithFullQueue);
// afterWrite now does too, and counts the entry in unqueued until its
// record is queued, so that timed cannot stop the clock meanwhile. The
// drain is held here while it takes its victims out of the index (the
// test hook at a victim's hash), standing for a segment lock held by a
// table rebuild or a long pass.
func TestFastClockStartsBeforeFullQueueDrainOfNewKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const blockKey, ttlKey = 1, -1
		var armed atomic.Bool
		entered, release := make(chan struct{}), make(chan struct{})
		c := ctNew(t, Options[int, int]{MaxEntries: 2, Policy: "fifo"})
		ctPin(c)
		c.setHasher(func(k int) uint64 {
			// Only once the drain pass has released c.mu and takes its
			// victims (key 1 first) out of the index, as a segment lock
			// held by a table rebuild would hold it.
			if k == blockKey && c.c.dropping.Load() > 0 && armed.CompareAndSwap(true, false) {
				close(entered)
				<-release
			}
			return uint64(k) * 0x9e3779b97f4a7c15
		})
		// Fill the write queue while holding the maintenance lock, so that
		// no writer drains it (its records put the index over the bound: the
		// drain will evict). No entry has a TTL: the fast clock is off.
		c.c.mu.Lock()
		for k := 1; c.c.writes.Len() < c.c.writes.Cap(); k++ {
			c.Set(k, k)
		}
		c.c.mu.Unlock()
		armed.Store(true)

		done := make(chan struct{})
		go func() {
			defer close(done)
			c.SetWithTTL(ttlKey, 42, 10*time.Millisecond) // a new key, queue full
		}()
		select {
		case <-entered:
		case <-done:
			t.Fatal("the SetWithTTL ran no pass over the full queue")
		}
		// Well before the background goroutine's first (slow) tick at 1s.
		time.Sleep(500 * time.Millisecond)
		v, ok := c.Get(ttlKey)
		pv, pok := c.Peek(ttlKey)
		close(release)
		<-done
		if ok {
			t.Errorf("Get(%d) = %d, true 500ms after SetWithTTL(%d, 42, 10ms): an expired entry was returned "+
				"(cached clock frozen at %v while the writer drained the full queue)",
				ttlKey, v, ttlKey, time.Duration(c.c.nowNano.Load()))
		}
		if pok {
			t.Errorf("Peek(%d) = %d, true 500ms after SetWithTTL(%d, 42, 10ms)", ttlKey, pv, ttlKey)
		}
		c.Close()
	})
}
