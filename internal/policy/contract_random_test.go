package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

func TestContractHeavy(t *testing.T) {
	for _, name := range Names() {
		for _, weighted := range []bool{false, true} {
			for _, max := range []uint64{1, 2, 3, 5, 10, 100} {
				for seed := uint64(1); seed <= 5; seed++ {
					p := newNamed(t, name, max, weighted)
					r := rand.New(rand.NewPCG(seed, max))
					randomContract(t, name, p, max, weighted, r, contractRun{ops: 5000, passEvery: 1, keys: 3*max + 5, overweight: true})
				}
			}
		}
	}
}

// contractRun shapes a run of randomContract: ops random operations on
// keys distinct keys, with an eviction pass after every passEvery-th on
// average (1: after each), and weights that may exceed max (overweight).
type contractRun struct {
	ops, passEvery int
	keys           uint64
	overweight     bool
}

func randomContract(t *testing.T, name string, p Policy, max uint64, weighted bool, r *rand.Rand, run contractRun) {
	t.Helper()
	tracked := map[*node.Node]bool{}
	gone := map[*node.Node]bool{}
	byKey := map[uint64]*node.Node{}
	var weight uint64
	newNode := func(k uint64) *node.Node {
		w := uint32(1)
		if weighted {
			switch r.IntN(4) {
			case 0:
				w = 0
			case 1:
				w = uint32(max)
				if run.overweight {
					w = uint32(max + 1 + r.Uint64N(2*max+1))
				}
			default:
				w = uint32(1 + r.Uint64N(max))
			}
		}
		return node.NewKeyed(mix.Mix(k), w)
	}
	for i := range run.ops {
		k := r.Uint64N(run.keys)
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
			if n.Queue != 0 {
				t.Fatalf("%s: removed node keeps Queue %d", name, n.Queue)
			}
			delete(tracked, n)
			delete(byKey, k)
			gone[n] = true
			weight -= uint64(n.Weight)
		case op >= 8 && n != nil:
			m := newNode(k)
			p.Replace(n, m)
			delete(tracked, n)
			gone[n] = true
			tracked[m] = true
			byKey[k] = m
			weight += uint64(m.Weight) - uint64(n.Weight)
		}
		if run.passEvery > 1 && r.IntN(run.passEvery) != 0 {
			continue
		}
		for v := p.Evict(); v != nil; v = p.Evict() {
			if gone[v] {
				t.Fatalf("%s max %d w %v op %d: evicted a node twice or after removal", name, max, weighted, i)
			}
			if !tracked[v] {
				t.Fatalf("%s: Evict returned an untracked node", name)
			}
			if v.Queue != 0 {
				t.Fatalf("%s: evicted node keeps Queue %d", name, v.Queue)
			}
			delete(tracked, v)
			gone[v] = true
			delete(byKey, mix.Unmix(node.KeyedHash(v)))
			weight -= uint64(v.Weight)
		}
		if p.Len() != len(tracked) || p.Weight() != weight {
			t.Fatalf("%s max %d w %v op %d: Len %d/%d Weight %d/%d", name, max, weighted, i, p.Len(), len(tracked), p.Weight(), weight)
		}
		if p.Weight() > max {
			t.Fatalf("%s max %d op %d: weight %d over max", name, max, i, p.Weight())
		}
	}
}
