package cachekit

import (
	"runtime"
	"testing"
)

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
	// Hold the maintenance lock while another goroutine fills the queue:
	// its Set of one key more then waits for the queue to drain.
	c.c.mu.Lock()
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		for k := range n + 1 {
			c.Set(k, "v")
		}
	}()
	for c.c.writes.Len() < n {
		runtime.Gosched()
	}
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
