package policy

import (
	"slices"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// When the miniatures lower the window's share during an Add that finds the
// policy over its maximum (the cache applies up to 64 writes before it
// evicts), the window's excess stays there and leaves through Evict, as
// candidates that must beat the main space's victims. setWindowShare moved
// it, the batch's new keys included, into probation freely, and Evict then
// evicted main-space victims with no frequency comparison: keys seen once
// pushed out keys read five times (shrinkWindow already waited).
func TestTinyLFUShareDropOverMaxKeepsFrequentKeys(t *testing.T) {
	const max = 100
	t.Log("TinyLFU max 100 unweighted, seed 1; no random operations")
	p := NewTinyLFU(max, false, 1, node.KeyedHash)
	d := newDriver(t, p)
	for k := uint64(1); k <= max; k++ {
		d.expect("filling", d.add(k, 1))
	}
	for range 5 { // keys 1..100 are hot: each read 5 times
		for k := uint64(1); k <= max; k++ {
			d.get(k)
		}
	}
	if p.sim == nil || p.sim.mask != 0 {
		t.Fatal("want the miniatures started, sampling every request")
	}
	d.add(999, 1) // a cold key takes the window (of 1 entry)
	// A batch of 20 writes of new keys, applied before the eviction pass
	// as the cache's maintenance does. The miniatures' epoch ends on the
	// last one, and the window share 0 has hit most in it.
	for k := uint64(1000); k < 1020; k++ {
		if k == 1019 {
			m := p.sim
			for i := range m.minis {
				m.minis[i].score, m.minis[i].hits = 0, 0
			}
			m.minis[0].hits = float64(m.epoch)
			m.seen = m.epoch - 1
		}
		n := node.NewKeyed(mix.Mix(k), 1)
		d.nodes[k] = n
		p.Add(n)
	}
	if p.WindowMax() != 0 {
		t.Fatalf("the miniatures' advice was not followed: window target %d, want 0", p.WindowMax())
	}
	ev := d.drain()
	var hotLost, coldKept []uint64
	for _, k := range ev {
		if k <= max {
			hotLost = append(hotLost, k)
		}
	}
	for k := range d.nodes {
		if k > max {
			coldKept = append(coldKept, k)
		}
	}
	slices.Sort(coldKept)
	if len(hotLost) > 0 && len(coldKept) > 0 {
		t.Errorf("after a batch of 20 one-time keys, %d keys read 5 times were evicted (%v) while keys seen once were kept (%v); estimates: hot key %d, one-time key %d",
			len(hotLost), hotLost, coldKept, p.sketch.estimate(mix.Mix(hotLost[0])), p.sketch.estimate(mix.Mix(coldKept[0])))
	}
}
