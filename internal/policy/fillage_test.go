package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// TestTinyLFUAgesWhileFilling checks that counts gathered while the cache
// fills are halved (rounding up) each time the population doubles, and
// only while it fills: warm-up keys must not keep the frequencies they
// gathered over a small population once the cache is full, but a key seen
// once keeps a count of one.
func TestTinyLFUAgesWhileFilling(t *testing.T) {
	const max = 256
	p := newTinyLFU(max, false, 1, node.KeyedHash)
	add := func(k uint64) *node.Node {
		n := node.NewKeyed(mix.Mix(k), 1)
		p.Add(n)
		if v := p.Evict(); v != nil {
			t.Fatalf("evicted %x while filling", node.KeyedHash(v))
		}
		return n
	}
	var nodes []*node.Node
	for k := range uint64(20) { // population 20: halved at 16, next at 32
		nodes = append(nodes, add(k))
	}
	hot := nodes[19]
	for range 7 {
		p.Access(hot)
	}
	if got := p.sketch.estimate(node.KeyedHash(hot)); got != 8 {
		t.Fatalf("estimate after 8 requests at population 20 = %d, want 8", got)
	}
	for k := uint64(20); k < 31; k++ {
		add(k)
	}
	if got := p.sketch.estimate(node.KeyedHash(hot)); got != 8 {
		t.Fatalf("estimate at population 31 = %d, want 8 (no halving before 32)", got)
	}
	add(31) // population 32
	if got := p.sketch.estimate(node.KeyedHash(hot)); got != 4 {
		t.Fatalf("estimate at population 32 = %d, want 4", got)
	}
	for k := uint64(32); k < 64; k++ {
		add(k)
	}
	if got := p.sketch.estimate(node.KeyedHash(hot)); got != 2 {
		t.Fatalf("estimate at population 64 = %d, want 2", got)
	}
	for k := uint64(64); k < max; k++ {
		add(k)
	}
	// Full: 256 reached (halved at 64, 128 and 256, rounding up); from now
	// on only the periodic reset ages the sketch.
	if got := p.sketch.estimate(node.KeyedHash(hot)); got != 1 {
		t.Fatalf("estimate once full = %d, want 1 (halving rounds up)", got)
	}
	if got := p.sketch.estimate(node.KeyedHash(nodes[0])); got != 1 {
		t.Fatalf("estimate of the first key once full = %d, want 1 (seen once)", got)
	}
	for range 7 {
		p.Access(hot)
	}
	before := p.sketch.estimate(node.KeyedHash(hot))
	if before != 8 {
		t.Fatalf("estimate once full, 7 requests later = %d, want 8", before)
	}
	for k := uint64(max); k < 2*max; k++ { // the population stays at max
		n := node.NewKeyed(mix.Mix(k), 1)
		p.Add(n)
		for v := p.Evict(); v != nil; v = p.Evict() {
		}
	}
	if got := p.sketch.estimate(node.KeyedHash(hot)); got != before {
		t.Fatalf("estimate after %d more keys into a full cache = %d, want %d (no halving once full)", max, got, before)
	}
}
