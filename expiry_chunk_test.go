package cachekit

import (
	"testing"
	"time"
)

// A pass that applies more than writeChunk queued writes evicts after each
// chunk, before it advances the timer wheel: the policy then evicts live
// new entries for capacity while the entries that fill it have expired
// (and are expired a moment later by the same pass), leaving the cache
// with free room and the new entries lost.
func TestChunkEvictsBeforeExpiry(t *testing.T) {
	for _, pol := range []string{"", "tinylfu", "lfu", "dlfu", "clock", "sieve"} {
		t.Run(pol, func(t *testing.T) {
			const max = 1000
			const fresh = 64
			clk := newFakeClock()
			var lost []int
			c := ctNew(t, Options[int, int]{MaxEntries: max, Policy: pol, Clock: clk, OnEvict: func(k, v int, cause Cause) {
				if cause == CauseCapacity {
					lost = append(lost, k)
				}
			}})
			for k := range max {
				c.SetWithTTL(k, k, time.Minute)
			}
			for range 3 {
				for k := range max {
					c.Get(k)
				}
				c.settle()
			}
			clk.Advance(2 * time.Minute) // every entry has expired
			// Another goroutine's pass holds the maintenance lock while
			// these writes queue up (simulated: the test holds it).
			c.c.mu.Lock()
			for k := max; k < max+fresh; k++ {
				c.Set(k, k) // no TTL
			}
			c.c.mu.Unlock()
			c.settle()
			live := 0
			for k := max; k < max+fresh; k++ {
				if _, ok := c.Get(k); ok {
					live++
				}
			}
			if len(lost) > 0 {
				t.Errorf("%d of %d fresh entries evicted for capacity while every other entry had expired; after the pass Len %d, fresh found %d", len(lost), fresh, c.Len(), live)
			}
		})
	}
}
