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

// Random evicts an entry chosen uniformly at random among the tracked
// ones, whatever their weight, from a PCG generator seeded by the seed:
// the same seed and the same calls give the same victims. Nodes are kept
// in a slice, and a map from each node to its index there, so every
// operation is O(1).
//
// Random is not safe for concurrent use.
type Random struct {
	nodes  []*node.Node
	pos    map[*node.Node]int
	max    uint64
	weight uint64
	rng    *rand.Rand
}

// NewRandom returns a random policy for at most max weight.
func NewRandom(max uint64, seed uint64) *Random {
	if max == 0 {
		max = 1
	}
	return &Random{max: max, pos: make(map[*node.Node]int), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Len implements Policy.
func (p *Random) Len() int { return len(p.nodes) }

// Weight implements Policy.
func (p *Random) Weight() uint64 { return p.weight }

// Max implements Policy.
func (p *Random) Max() uint64 { return p.max }

// Add implements Policy.
func (p *Random) Add(n *node.Node) {
	p.pos[n] = len(p.nodes)
	p.nodes = append(p.nodes, n)
	n.Queue = qHeap
	p.weight += uint64(n.Weight)
}

// Access implements Policy; Random ignores reads.
func (p *Random) Access(*node.Node) {}

// Remove implements Policy.
func (p *Random) Remove(n *node.Node) { p.remove(p.pos[n]) }

// remove stops tracking the node at i, moving the last one into its place.
func (p *Random) remove(i int) *node.Node {
	n := p.nodes[i]
	last := len(p.nodes) - 1
	if i != last {
		p.nodes[i] = p.nodes[last]
		p.pos[p.nodes[i]] = i
	}
	p.nodes[last] = nil
	p.nodes = p.nodes[:last]
	delete(p.pos, n)
	n.Queue = 0
	p.weight -= uint64(n.Weight)
	return n
}

// Replace implements Policy.
func (p *Random) Replace(old, n *node.Node) {
	i := p.pos[old]
	delete(p.pos, old)
	old.Queue = 0
	p.nodes[i] = n
	p.pos[n] = i
	n.Queue = qHeap
	p.weight = p.weight - uint64(old.Weight) + uint64(n.Weight)
}

// Evict implements Policy.
func (p *Random) Evict() *node.Node {
	if p.weight <= p.max {
		return nil
	}
	return p.remove(p.rng.IntN(len(p.nodes)))
}
