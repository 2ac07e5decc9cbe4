package sim

import (
	"testing"
	"testing/synctest"
)

// The "cache" replay was not bounded by its capacity: the real cache, written
// by one goroutine, ran a pass only every min(32, capacity/16) writes, so at
// capacity 32 it held 33 keys and scored more hits than Bélády's optimum
// (opt-bypass, documented as the ceiling) allows any 32-entry cache.
func TestCacheReplayWithinOptimum(t *testing.T) {
	// Inside a bubble the fake clock stands still while the replay runs,
	// so the cache's once-a-second background pass never cuts in: the
	// outcome depends only on the writes of the replay itself.
	synctest.Test(t, func(t *testing.T) {
		const capacity = 32 // the first capacity whose write batch is 2, not 1
		// 33 distinct keys, twice: no cache of 32 entries can hit more
		// than 32 times in the second pass.
		var keys []uint64
		for range 2 {
			for k := range uint64(capacity + 1) {
				keys = append(keys, k)
			}
		}
		tr := NewTrace(keys)
		ceiling, err := tr.Run(NameOPTBypass, capacity)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.Run(NameCache, capacity)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hits > ceiling.Hits {
			t.Errorf("%q @%d: %d hits of %d; Bélády's optimum with bypass (%q, the ceiling) gets %d: the cache held more than %d keys",
				NameCache, capacity, got.Hits, got.Requests, NameOPTBypass, ceiling.Hits, capacity)
		}

		// In steady state too: a loop of 33 keys, 40 times.
		keys = keys[:0]
		for range 40 {
			for k := range uint64(capacity + 1) {
				keys = append(keys, k)
			}
		}
		tr = NewTrace(keys)
		ceiling, err = tr.Run(NameOPTBypass, capacity)
		if err != nil {
			t.Fatal(err)
		}
		got, err = tr.Run(NameCache, capacity)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hits > ceiling.Hits {
			t.Errorf("loop of %d keys: %q @%d: %d hits of %d; %q gets %d",
				capacity+1, NameCache, capacity, got.Hits, got.Requests, NameOPTBypass, ceiling.Hits)
		}
	})
}
