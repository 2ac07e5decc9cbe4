package cachekit

import "testing"

// A Set that finds the write queue full drains it by a maintenance pass,
// whose OnEvict calls run before the Set has queued its own record. If one
// of them panics (recovered by the caller), the record must still be
// queued: without it the new entry is in the index but unknown to the
// policy, never evicted, and the bound no longer holds.
func TestOnEvictPanicWithFullQueueKeepsRecord(t *testing.T) {
	panicNext := true
	c := ctNew(t, Options[int, string]{
		MaxEntries: 4,
		OnEvict: func(k int, v string, cause Cause) {
			if panicNext {
				panicNext = false
				panic("callback failed")
			}
		},
	})
	c.Close() // maintenance only on the callers' goroutines
	n := c.c.writes.Cap()
	// Hold the maintenance lock while the queue fills, as a long pass on
	// another goroutine would: another goroutine's Set of one key more then
	// waits for the queue to drain. The queue is filled here, not by that
	// goroutine: each of its Sets tries the lock once its record is queued
	// (a batch of 1 in a cache this small), and one that tried after the
	// unlock below ran the drain itself, before key n was ever written (the
	// test failed then, 1 run in 2,000 with GOMAXPROCS 8).
	c.c.mu.Lock()
	for k := range n {
		c.Set(k, "v") // its TryLock fails: this goroutine holds the lock
	}
	if l := c.c.writes.Len(); l != n {
		c.c.mu.Unlock()
		t.Fatalf("setup: %d records queued, want a full queue of %d", l, n)
	}
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		c.Set(n, "v")
	}()
	// Its Set yields while the queue is full and the lock taken.
	ctWaitGoroutine(t, "runtime.Gosched(", ").afterWrite(")
	c.c.mu.Unlock()
	if r := <-done; r == nil {
		t.Fatal("OnEvict did not panic in the Set that drained the queue")
	}
	// The Set of key n stored its entry before the panic.
	if _, ok := c.Peek(n); !ok {
		t.Fatalf("key %d, whose Set panicked in OnEvict after storing it, is not in the cache", n)
	}
	for k := n + 1; k < n+1000; k++ {
		c.Set(k, "x")
	}
	if s := c.Stats(); s.Entries > 4 {
		t.Errorf("after churn the cache holds %d entries, bound 4", s.Entries)
	}
	if err := c.checkInvariants(); err != nil {
		t.Errorf("invariants: %v", err)
	}
}
