package cachekit

import (
	"testing"
	"time"
)

// A Set that finds the write queue full drains it with a maintenance pass
// before it queues its own record. A Clock that panics in that pass (the
// panic recovered by the caller, as net/http recovers a handler's) must not
// lose the record: the entry is in the index, and a policy that never
// heard of it would never evict it, the cache over its bound for good.
func TestFullQueueDrainClockPanicKeepsRecord(t *testing.T) {
	clock := &panicClock{fakeClock: newFakeClock()}
	c := ctNew(t, Options[int, int]{MaxEntries: 64, Policy: "lru", Clock: clock})
	c.Close() // maintenance runs on this goroutine only
	size := c.c.writes.Cap()
	// Hold the maintenance lock while the queue fills, as a long pass on
	// another goroutine would: no writer can drain it meanwhile.
	c.c.mu.Lock()
	for k := range size {
		c.Set(k, k) // no TTL: Set itself never reads the clock
	}
	c.c.mu.Unlock()
	if n := c.c.writes.Len(); n != size {
		t.Fatalf("setup: %d records queued, want a full queue of %d", n, size)
	}
	clock.arm(1) // the draining pass's first read of the clock panics
	if p := ctRecover(func() { c.Set(size, size) }); p == nil {
		t.Fatal("setup: the clock did not panic in the drain of the full queue")
	}
	if v, ok := c.Get(size); !ok || v != size {
		t.Fatalf("Get(%d) = %d, %v after its Set panicked in the drain; want the stored value", size, v, ok)
	}
	// Churn through other keys: every one of them is evictable, so the
	// bound must hold once maintenance has run.
	for k := size + 1; k < size+1000; k++ {
		c.Set(k, k)
	}
	if s := c.Stats(); s.Entries > 64 {
		t.Errorf("after churn the cache holds %d entries, bound 64", s.Entries)
	}
	done := make(chan error, 1)
	go func() { done <- c.checkInvariants() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after a Clock panic in a full queue's drain: %v", err)
		}
	case <-time.After(60 * time.Second): // guards against a deadlock
		t.Fatal("maintenance after the panic has not returned")
	}
}
