package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// In a weighted TinyLFU over its maximum with the window within its target
// (a refused light candidate freed less than the excess, or a new entry
// took the room a heavier one left), Evict used to evict the main space's
// victim with no frequency comparison: a scan of 300 one-hit keys of
// weights 1..9 evicted 12 of 50 keys read 15 times each (none with equal
// weights). The window's oldest entry now has to beat the victim, as in
// Caffeine. Seed logged.
func TestWeightedScanKeepsFrequentEntries(t *testing.T) {
	const max, seed = 1000, 1
	t.Logf("seed %d", seed)
	p := NewTinyLFU(max, true, 1, node.KeyedHash)
	d := newDriver(t, p)
	for k := uint64(1); k <= 50; k++ {
		d.expect("adding a hot key", d.add(k, 5))
		for range 15 {
			d.get(k)
		}
	}
	r := rand.New(rand.NewPCG(seed, 2))
	var lost []uint64
	for k := uint64(10000); k < 10300; k++ {
		for _, v := range d.add(k, uint32(1+r.IntN(9))) {
			if v <= 50 {
				lost = append(lost, v)
			}
		}
	}
	if len(lost) > 0 {
		t.Errorf("a scan of one-hit keys evicted %d keys read 15 times each (%v), estimate %d against the scan keys' 1",
			len(lost), lost, p.sketch.estimate(mix.Mix(lost[0])))
	}
}

// A weighted TinyLFU's sketch, which grows as the population first passes
// 1,024, 2,048, ... entries, used to start afresh at each growth: every
// count was forgotten (100 keys read ten times estimated 0 afterwards and
// the next 100 one-hit keys evicted all of them). It now widens and carries
// the held keys' counts, as a counted cache's sketch does.
func TestWeightedSketchGrowthKeepsCounts(t *testing.T) {
	const max = 2000
	p := NewTinyLFU(max, true, 1, node.KeyedHash)
	d := newDriver(t, p)
	for k := uint64(1); k <= 100; k++ {
		d.expect("adding a hot key", d.add(k, 1))
		for range 10 {
			d.get(k)
		}
	}
	before := p.sketch.estimate(mix.Mix(1))
	// Fill the cache exactly (no evictions): the population passes 1,024.
	for k := uint64(1000); k < 2900; k++ {
		d.expect("filling", d.add(k, 1))
	}
	after := p.sketch.estimate(mix.Mix(1))
	var lost []uint64
	for k := uint64(10000); k < 10100; k++ {
		for _, v := range d.add(k, 1) {
			if v <= 100 {
				lost = append(lost, v)
			}
		}
	}
	if after < before || len(lost) > 0 {
		t.Errorf("hot key's estimate %d before the population passed 1,024, %d after; %d of 100 hot keys evicted by one-hit keys",
			before, after, len(lost))
	}
}
