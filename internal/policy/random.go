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
// Random evicts before it inserts, so the entry being inserted is never
// the victim of its own insertion. Here the owner adds first: the victims
// are drawn among the other entries while the weight is over the maximum,
// and the entry added last goes only once it is alone (it weighs more than
// the maximum).
//
// Random is not safe for concurrent use.
type Random struct {
	nodes  []*node.Node
	pos    map[*node.Node]int
	fresh  *node.Node // the node being inserted, until the weight is within the maximum
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
	p.fresh = n
	p.settle()
}

// settle ends the insertion once the weight is within the maximum, as
// Evict does when it returns nil (an owner may skip that call).
func (p *Random) settle() {
	if p.weight <= p.max {
		p.fresh = nil
	}
}

// Access implements Policy; Random ignores reads.
func (p *Random) Access(*node.Node) {}

// Remove implements Policy.
func (p *Random) Remove(n *node.Node) {
	p.remove(p.pos[n])
	p.settle()
}

// remove stops tracking the node at i, moving the last one into its place.
func (p *Random) remove(i int) *node.Node {
	n := p.nodes[i]
	if n == p.fresh {
		p.fresh = nil
	}
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
	if p.fresh == old {
		p.fresh = n
	}
	p.settle()
}

// Evict implements Policy.
func (p *Random) Evict() *node.Node {
	if p.weight <= p.max {
		p.fresh = nil // the insertion is over
		return nil
	}
	var v *node.Node
	if p.fresh == nil {
		v = p.remove(p.rng.IntN(len(p.nodes)))
	} else if last := len(p.nodes) - 1; last == 0 {
		v = p.remove(0) // the entry being inserted, alone
	} else {
		// Uniform among the others: the draw that would pick the entry
		// being inserted picks the last slot, which it does not hold.
		i := p.rng.IntN(last)
		if p.nodes[i] == p.fresh {
			i = last
		}
		v = p.remove(i)
	}
	p.settle()
	return v
}
