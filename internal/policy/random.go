package policy

import (
	"math/rand/v2"

	"github.com/cachekit/cachekit/internal/node"
)

func init() {
	Register("random", "random: evicts an entry chosen uniformly at random (deterministic for a seed)", func(c Config) (Policy, error) {
		if err := noParam("random", c); err != nil {
			return nil, err
		}
		return NewRandom(c.Max, c.Seed), nil
	})
}

// randomItem is a tracked node of Random and the Aux it had before.
type randomItem struct {
	n   *node.Node
	aux uint64
}

// Random evicts an entry chosen uniformly at random among the tracked
// ones, whatever their weight, from a PCG generator seeded by the seed:
// the same seed and the same calls give the same victims. Nodes are kept
// in a slice; a node's Aux holds its index while it is tracked (the Aux it
// had before is given back when it leaves), so every operation is O(1).
//
// Random is not safe for concurrent use.
type Random struct {
	items  []randomItem
	max    uint64
	weight uint64
	rng    *rand.Rand
}

// NewRandom returns a random policy for at most max weight.
func NewRandom(max uint64, seed uint64) *Random {
	if max == 0 {
		max = 1
	}
	return &Random{max: max, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Len implements Policy.
func (p *Random) Len() int { return len(p.items) }

// Weight implements Policy.
func (p *Random) Weight() uint64 { return p.weight }

// Max implements Policy.
func (p *Random) Max() uint64 { return p.max }

// Add implements Policy.
func (p *Random) Add(n *node.Node) {
	p.items = append(p.items, randomItem{n: n, aux: n.Aux})
	n.Aux = uint64(len(p.items) - 1)
	n.Queue = qHeap
	p.weight += uint64(n.Weight)
}

// Access implements Policy; Random ignores reads.
func (p *Random) Access(*node.Node) {}

// Remove implements Policy.
func (p *Random) Remove(n *node.Node) { p.remove(int(n.Aux)) }

// remove stops tracking the node at i, moving the last one into its place.
func (p *Random) remove(i int) *node.Node {
	e := p.items[i]
	last := len(p.items) - 1
	if i != last {
		p.items[i] = p.items[last]
		p.items[i].n.Aux = uint64(i)
	}
	p.items[last] = randomItem{}
	p.items = p.items[:last]
	e.n.Aux, e.n.Queue = e.aux, 0
	p.weight -= uint64(e.n.Weight)
	return e.n
}

// Replace implements Policy.
func (p *Random) Replace(old, n *node.Node) {
	i := int(old.Aux)
	e := &p.items[i]
	old.Aux, old.Queue = e.aux, 0
	e.n, e.aux = n, n.Aux
	n.Aux, n.Queue = uint64(i), qHeap
	p.weight = p.weight - uint64(old.Weight) + uint64(n.Weight)
}

// Evict implements Policy.
func (p *Random) Evict() *node.Node {
	if p.weight <= p.max {
		return nil
	}
	return p.remove(p.rng.IntN(len(p.items)))
}
