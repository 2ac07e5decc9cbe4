package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// TestBatchedContract checks the contract's invariants when up to 64
// operations come between eviction passes, as when the cache's maintenance
// applies its queued writes, for every policy, weighted or not.
func TestBatchedContract(t *testing.T) {
	for _, name := range Names() {
		for _, weighted := range []bool{false, true} {
			for _, max := range []uint64{1, 2, 3, 7, 50, 300, 5000} {
				for seed := uint64(1); seed <= 3; seed++ {
					p := newNamed(t, name, max, weighted)
					r := rand.New(rand.NewPCG(seed, max+99))
					batched(t, name, p, max, weighted, r)
				}
			}
		}
	}
}

func batched(t *testing.T, name string, p Policy, max uint64, weighted bool, r *rand.Rand) {
	t.Helper()
	tracked := map[*node.Node]bool{}
	byKey := map[uint64]*node.Node{}
	var weight uint64
	newNode := func(k uint64) *node.Node {
		w := uint32(1)
		if weighted {
			switch r.IntN(6) {
			case 0:
				w = 0
			case 1:
				w = uint32(max)
			default:
				w = uint32(1 + r.Uint64N(max))
			}
		}
		return node.NewKeyed(mix.Mix(k), w)
	}
	keys := 4*max + 5
	for i := range 40000 {
		k := r.Uint64N(keys)
		n := byKey[k]
		switch op := r.IntN(10); {
		case op < 4 && n == nil:
			n = newNode(k)
			p.Add(n)
			tracked[n] = true
			byKey[k] = n
			weight += uint64(n.Weight)
		case op < 7 && n != nil:
			p.Access(n)
		case op == 7 && n != nil:
			p.Remove(n)
			delete(tracked, n)
			delete(byKey, k)
			weight -= uint64(n.Weight)
		case op >= 8 && n != nil:
			m := newNode(k)
			p.Replace(n, m)
			delete(tracked, n)
			tracked[m] = true
			byKey[k] = m
			weight += uint64(m.Weight) - uint64(n.Weight)
		}
		if r.IntN(64) != 0 {
			continue
		}
		for v := p.Evict(); v != nil; v = p.Evict() {
			if !tracked[v] {
				t.Fatalf("%s max %d w %v op %d: Evict returned an untracked node", name, max, weighted, i)
			}
			if v.Queue != 0 {
				t.Fatalf("%s: evicted node keeps Queue %d", name, v.Queue)
			}
			delete(tracked, v)
			delete(byKey, mix.Unmix(node.KeyedHash(v)))
			weight -= uint64(v.Weight)
		}
		if p.Len() != len(tracked) || p.Weight() != weight {
			t.Fatalf("%s max %d w %v op %d: Len %d/%d Weight %d/%d", name, max, weighted, i, p.Len(), len(tracked), p.Weight(), weight)
		}
		if p.Weight() > max {
			t.Fatalf("%s max %d w %v op %d: weight %d over max", name, max, weighted, i, p.Weight())
		}
	}
}
