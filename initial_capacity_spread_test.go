package cachekit

import (
	"runtime"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
)

// A cache filled with InitialCapacity entries does not grow its index
// (Options.InitialCapacity: room up front, "to avoid growing the index
// while the cache fills"). Each segment was sized for the mean share,
// rounded down, and keys spread unevenly: the fullest segment of dozens
// usually grew (18 of 20 caches of InitialCapacity 500 with 64 segments).
func TestInitialCapacityRoomForUnevenSpread(t *testing.T) {
	nseg := segments(0, 0, runtime.GOMAXPROCS(0))
	ic := 7*nseg + nseg/2 // 7.5 entries a segment on average
	grew := 0
	const seeds = 10
	for seed := range uint64(seeds) {
		c := Must(Options[uint64, int]{InitialCapacity: ic})
		if len(c.c.segs) != nseg {
			t.Fatalf("%d segments, want %d", len(c.c.segs), nseg)
		}
		// A fixed, well-mixed hash, so that the test is deterministic:
		// it stands for the random per-cache seed.
		c.setHasher(func(k uint64) uint64 { return mix.Mix(k ^ seed*0x9e3779b97f4a7c15) })
		before := c.indexSlots()
		for k := range uint64(ic) {
			c.Set(k, 0)
		}
		if after := c.indexSlots(); after != before {
			grew++
			t.Logf("hash seed %d: InitialCapacity %d (%d segments): the index grew from %d to %d slots while %d entries were stored",
				seed, ic, nseg, before, after, ic)
		}
		c.Close()
	}
	if grew > 0 {
		t.Errorf("%d of %d caches grew their index while being filled to InitialCapacity (doc: InitialCapacity makes room up front, to avoid growing the index while the cache fills)", grew, seeds)
	}
}
