package cachekit

import (
	"sync"
	"testing"
	"time"
)

// Clear reports the entries it finds expired with CauseExpired, however
// many. Its maintenance pass expires at most expireBudget (4096) of them;
// the rest were reported and counted as cleared.
func TestClearReportsExpiredBacklogAsExpired(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		name := "unbounded"
		if bounded {
			name = "MaxEntries"
		}
		t.Run(name, func(t *testing.T) {
			const n = 3 * expireBudget
			clk := newFakeClock()
			var mu sync.Mutex
			causes := map[Cause]int{}
			opts := Options[int, int]{Clock: clk, OnEvict: func(k, v int, cause Cause) {
				mu.Lock()
				causes[cause]++
				mu.Unlock()
			}}
			if bounded {
				opts.MaxEntries = 2 * n
			}
			c := ctNew(t, opts)
			// No background pass: the only maintenance is what the
			// Sets and Clear run themselves.
			c.Close()
			for k := range n {
				c.SetWithTTL(k, k, time.Second)
			}
			clk.Advance(2 * time.Second) // every entry is past its deadline
			c.Clear()
			mu.Lock()
			got := map[Cause]int{CauseExpired: causes[CauseExpired], CauseCleared: causes[CauseCleared]}
			mu.Unlock()
			if got[CauseExpired] != n || got[CauseCleared] != 0 {
				t.Errorf("%d entries all expired 1s before Clear: OnEvict reported %d as expired and %d as cleared; want %d expired, 0 cleared (doc: Clear reports the entries it finds already expired with CauseExpired)",
					n, got[CauseExpired], got[CauseCleared], n)
			}
			if s := c.Stats(); s.Expired != n || s.Cleared != 0 {
				t.Errorf("Stats after Clear: Expired %d, Cleared %d; want Expired %d, Cleared 0", s.Expired, s.Cleared, n)
			}
		})
	}
}
