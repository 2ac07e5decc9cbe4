package sim_test

import (
	"fmt"

	"github.com/cachekit/cachekit/sim"
)

// Example replays a textbook reference string through a cache of three
// entries managed by LRU, then by Bélády's optimum.
func Example() {
	keys := []uint64{7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1}
	// A trace from a file would come from sim.Load("trace.txt.gz").
	trace := sim.NewTrace(keys)
	for _, name := range []string{"lru", "opt"} {
		r, err := trace.Run(name, 3)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-4s %d hits of %d (%.0f%%)\n", name, r.Hits, r.Requests, 100*r.HitRatio())
	}
	// Output:
	// lru  8 hits of 20 (40%)
	// opt  11 hits of 20 (55%)
}
