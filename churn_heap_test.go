package cachekit

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// TestChurnHeapPlateau: under churn of many times the capacity with
// TTLs (rounds of fresh keys, each round expiring before the next), the
// live heap plateaus: the test measures it after a garbage collection at
// the end of every round, and the growth from the 10th round to the last
// (40th) must stay far below what a leak of even a few bytes per key
// churned would add (TestChurnPlateau* check Len, the wheel and the index
// slots; this checks everything else the cache holds: the policy, the
// buffers, the waiting map, the victim buffers).
func TestChurnHeapPlateau(t *testing.T) {
	const perRound, rounds, from = 2000, 40, 10
	for _, bound := range []int{0, perRound / 2} {
		t.Run(fmt.Sprintf("MaxEntries=%d", bound), func(t *testing.T) {
			clk := newFakeClock()
			c := ctNew(t, Options[int, *[4]int]{MaxEntries: bound, Clock: clk})
			heap := func() uint64 {
				var m runtime.MemStats
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			var at uint64
			for r := range rounds {
				for i := range perRound {
					k := r*perRound + i
					c.SetWithTTL(k, &[4]int{k}, time.Duration(1+i%7)*time.Millisecond)
					c.Get(k - perRound/2)
				}
				clk.Advance(10 * time.Millisecond)
				c.settle()
				if r == from {
					at = heap()
				}
			}
			end := heap()
			churned := uint64((rounds - from) * perRound)
			t.Logf("live heap after round %d: %d bytes; after round %d: %d (%d keys churned between)", from, at, rounds, end, churned)
			// 4 bytes per churned key: 240,000 bytes here.
			if end > at && end-at > 4*churned {
				t.Errorf("live heap grew by %d bytes over %d churned keys (from %d to %d)", end-at, churned, at, end)
			}
			runtime.KeepAlive(c)
		})
	}
}
