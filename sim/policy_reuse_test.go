package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
	"github.com/cachekit/cachekit/internal/policy"
)

// Reusing evicted nodes changes no hit: every policy hits as it does when
// driven with a fresh node for every miss.
func TestPolicyReplaysAsFreshNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 2))
	z := rand.NewZipf(r, 1.01, 1, 20000)
	keys := make([]uint64, 100000)
	for i := range keys {
		keys[i] = z.Uint64()
		if i%3 == 0 {
			keys[i] = uint64(i) << 20
		}
	}
	for _, name := range policy.Names() {
		for _, c := range []int{1, 2, 3, 50, 1000, 8000} {
			a, _ := NewPolicy(name, c, policySeed)
			p, _ := policy.New(name, uint64(c), false, policySeed, node.KeyedHash)
			idx := map[uint64]*node.Node{}
			for i, k := range keys {
				ha := a.Access(k)
				n := idx[k]
				hb := n != nil
				if hb {
					p.Access(n)
				} else {
					n = node.NewKeyed(mix.Mix(k), 1)
					idx[k] = n
					p.Add(n)
					for v := p.Evict(); v != nil; v = p.Evict() {
						delete(idx, mix.Unmix(node.KeyedHash(v)))
					}
				}
				if ha != hb {
					t.Fatalf("%s@%d request %d: %v vs %v", name, c, i, ha, hb)
				}
			}
		}
	}
}
