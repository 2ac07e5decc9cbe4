package cachekit

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The background goroutine stopped refreshing the cached clock (timed found
// no entry with a TTL in the wheel or the queue) while a caller's
// maintenance pass was still taking an evicted entry with a TTL out of the
// index, and Get returned that entry after its deadline.
//
// The cached clock runs fast only while timed reports entries with a TTL:
// it looks at the wheel, the write queue and the waiting records, but not
// at the victims that a pass has taken off the wheel and is still removing
// from the index (c.dropping), which Get can still find. The background
// goroutine's own drop keeps the time for readers (selfClock) because a
// segment lock may be held for long by a table rebuild; a caller's drop does
// not, and once the fast clock stops the cached time freezes for a second.
// Here the caller's drop is held at the victim's hash (a test hook), as a
// rebuild holding the segment's lock, or preemption, would hold it.
func TestFastClockRunsWhileVictimDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := ctNew(t, Options[int, int]{MaxEntries: 2, Policy: "fifo"})
		ctPin(c)
		var armed atomic.Bool
		entered, release := make(chan struct{}), make(chan struct{})
		c.setHasher(func(k int) uint64 {
			if k == 1 && armed.CompareAndSwap(true, false) {
				close(entered)
				<-release
			}
			return uint64(k) * 0x9e3779b97f4a7c15
		})
		// Past the background goroutine's first full pass (one second),
		// which runs timed.
		const ttl = 1200 * time.Millisecond
		c.SetWithTTL(1, 1, ttl) // the only entry with a TTL, first out of the FIFO
		c.Set(2, 2)
		synctest.Wait()
		armed.Store(true)
		done := make(chan struct{})
		go func() { // this Set's pass evicts key 1 and is held before removing it
			defer close(done)
			c.Set(3, 3)
		}()
		<-entered
		time.Sleep(1500 * time.Millisecond) // the background goroutine ticks meanwhile
		v, ok := c.Get(1)
		close(release)
		<-done
		if ok {
			t.Errorf("Get(1) = %d, true 1.5s after SetWithTTL(1, 1, %v): an expired entry was returned "+
				"(cached clock frozen at %v: the background goroutine stopped the fast clock while the "+
				"evicted entry was still in the index)", v, ttl, time.Duration(c.c.nowNano.Load()))
		}
		c.Close()
	})
}

// A Set with a TTL that finds the write queue full publishes its entry,
// reports the replaced value, and queues the record only afterwards: when a
// pass drained the queue meanwhile, the background goroutine stopped the
// fast clock and Get returned the new entry after its deadline for as long
// as OnEvict ran.
func TestFastClockRunsForUnqueuedTimedSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		c := ctNew(t, Options[int, int]{MaxEntries: 2, OnEvict: func(k, v int, cause Cause) {
			if k == 0 && cause == CauseReplaced {
				close(entered)
				<-release // a slow listener, on the writer's goroutine
			}
		}})
		ctPin(c)
		c.Set(0, 0)
		c.settle()
		synctest.Wait()
		// Another goroutine's pass holds the maintenance lock while writers
		// fill the queue.
		c.c.mu.Lock()
		for k := 1; c.c.writes.Len() < c.c.writes.Cap(); k++ {
			c.Set(k, k)
		}
		const ttl = 1200 * time.Millisecond // past the background goroutine's first full pass
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.SetWithTTL(0, 1, ttl) // replaces key 0: the queue is full
		}()
		<-entered
		c.c.mu.Unlock()
		time.Sleep(1500 * time.Millisecond)
		v, ok := c.Get(0)
		close(release)
		<-done
		if ok {
			t.Errorf("Get(0) = %d, true 1.5s after SetWithTTL(0, 1, %v): an expired entry was returned "+
				"(cached clock frozen at %v: the fast clock stopped while the entry's record waited for OnEvict)",
				v, ttl, time.Duration(c.c.nowNano.Load()))
		}
		c.Close()
	})
}
