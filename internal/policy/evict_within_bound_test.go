package policy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// TestEvictWithinBoundChangesNothing: Evict returns nil while the tracked
// weight is within the maximum, so an owner may skip the call then (the
// cache does, to spare its Clock a read). Every policy must then evict
// exactly as it does for an owner that calls Evict after every operation.
func TestEvictWithinBoundChangesNothing(t *testing.T) {
	for _, name := range Names() {
		for _, weighted := range []bool{false, true} {
			for _, max := range []uint64{3, 10, 100} {
				if !evictWithinBound(t, name, weighted, max) {
					break
				}
			}
		}
	}
}

// evictWithinBound drives two copies of a policy with the same random
// operations, one evicting after each, the other only while over its
// maximum, and reports whether they evicted alike.
func evictWithinBound(t *testing.T, name string, weighted bool, max uint64) bool {
	t.Helper()
	always := newNamed(t, name, max, weighted)
	skips := newNamed(t, name, max, weighted)
	r := rand.New(rand.NewPCG(max, 33))
	nodes := map[uint64][2]*node.Node{} // by key: always's node, skips's
	pair := func(k uint64) [2]*node.Node {
		w := uint32(1)
		if weighted {
			w = uint32(1 + r.Uint64N(max/2+1))
		}
		return [2]*node.Node{node.NewKeyed(mix.Mix(k), w), node.NewKeyed(mix.Mix(k), w)}
	}
	for op := range 20000 {
		k := r.Uint64N(3 * max)
		n := nodes[k]
		switch c := r.IntN(10); {
		case n[0] == nil:
			n = pair(k)
			always.Add(n[0])
			skips.Add(n[1])
			nodes[k] = n
		case c < 6:
			always.Access(n[0])
			skips.Access(n[1])
		case c < 7:
			always.Remove(n[0])
			skips.Remove(n[1])
			delete(nodes, k)
		default:
			m := pair(k)
			always.Replace(n[0], m[0])
			skips.Replace(n[1], m[1])
			nodes[k] = m
		}
		var va, vs []uint64
		for v := always.Evict(); v != nil; v = always.Evict() {
			va = append(va, mix.Unmix(node.KeyedHash(v)))
		}
		for skips.Weight() > skips.Max() {
			v := skips.Evict()
			if v == nil {
				t.Errorf("%s: Evict returned nil over the maximum", name)
				return false
			}
			vs = append(vs, mix.Unmix(node.KeyedHash(v)))
		}
		if !slices.Equal(va, vs) {
			t.Errorf("%s max %d weighted %v op %d: evicted %v when Evict is called after every operation, %v when it is skipped within the maximum", name, max, weighted, op, va, vs)
			return false
		}
		for _, k := range va {
			delete(nodes, k)
		}
	}
	return true
}

// TestTinyLFUFillWithoutEvictCountsReads: a cache fills without calling
// Evict (the weight is within the maximum). Entries past the window's
// target are in the main space, so reading one promotes it to protected
// and counts in its frequency; left in the window, it would do neither.
func TestTinyLFUFillWithoutEvictCountsReads(t *testing.T) {
	const max = 100
	p := NewTinyLFU(max, false, 1, node.KeyedHash)
	var n *node.Node
	for k := range uint64(max) {
		m := node.NewKeyed(mix.Mix(k), 1)
		p.Add(m)
		if k == max/2 {
			n = m // added long before the last: out of the window of 1
		}
	}
	for range 5 {
		p.Access(n)
	}
	if p.window.Weight() > p.WindowMax() {
		t.Errorf("window holds %d entries, target %d", p.window.Weight(), p.WindowMax())
	}
	if n.Queue != qProtected {
		t.Errorf("entry read 5 times is in queue %d, want protected (%d)", n.Queue, qProtected)
	}
	if f := p.sketch.estimate(node.KeyedHash(n)); f < 6 {
		t.Errorf("entry added and read 5 times has frequency %d, want 6", f)
	}
}

// TestSieveReplaceAfterFillWithoutEvict: a weighted cache fills without
// calling Evict, two entries are read, and a write makes one of them
// heavier: SIEVE evicts the entry never read, not the one just written.
func TestSieveReplaceAfterFillWithoutEvict(t *testing.T) {
	p := NewSieve(3)
	a, b, c := node.NewKeyed(mix.Mix(1), 1), node.NewKeyed(mix.Mix(2), 1), node.NewKeyed(mix.Mix(3), 1)
	p.Add(a)
	p.Add(b)
	p.Add(c) // within the maximum: the owner does not call Evict
	p.Access(a)
	p.Access(b)
	a2 := node.NewKeyed(mix.Mix(1), 2)
	p.Replace(a, a2)
	var got []uint64
	for v := p.Evict(); v != nil; v = p.Evict() {
		got = append(got, mix.Unmix(node.KeyedHash(v)))
	}
	if !slices.Equal(got, []uint64{3}) {
		t.Fatalf("evicted keys %v, want [3] (the only entry never read)", got)
	}
}
