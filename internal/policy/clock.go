package policy

import "github.com/cachekit/cachekit/internal/node"

func init() {
	Register("clock", "CLOCK (second chance): FIFO that spares an entry once if it was used since the hand last passed", func(c Config) (Policy, error) {
		if err := noParam("clock", c); err != nil {
			return nil, err
		}
		return NewClock(c.Max), nil
	})
}

// clockReferenced is the bit of node.Flags that CLOCK sets on a use.
const clockReferenced = 1

// Clock is the CLOCK algorithm (FIFO with second chance). The list is the
// clock face with the hand at its front: a referenced entry under the hand
// loses its bit and goes to the back; the first unreferenced one is
// evicted. New entries start unreferenced; reads and writes set the bit.
//
// Clock is not safe for concurrent use.
type Clock struct {
	list node.List
	max  uint64
}

// NewClock returns a CLOCK policy for at most max weight.
func NewClock(max uint64) *Clock {
	if max == 0 {
		max = 1
	}
	return &Clock{max: max}
}

// Len implements Policy.
func (p *Clock) Len() int { return p.list.Len() }

// Weight implements Policy.
func (p *Clock) Weight() uint64 { return p.list.Weight() }

// Max implements Policy.
func (p *Clock) Max() uint64 { return p.max }

// Add implements Policy.
func (p *Clock) Add(n *node.Node) {
	n.Queue = qList
	n.Flags = 0
	p.list.PushBack(n)
}

// Access implements Policy.
func (p *Clock) Access(n *node.Node) { n.Flags |= clockReferenced }

// Remove implements Policy.
func (p *Clock) Remove(n *node.Node) {
	p.list.Remove(n)
	n.Queue = 0
}

// Replace implements Policy: n keeps old's place and counts as used.
func (p *Clock) Replace(old, n *node.Node) {
	n.Queue = qList
	n.Flags = clockReferenced
	p.list.Replace(old, n)
	old.Queue = 0
}

// Evict implements Policy. The hand sweeps at most once around the clock:
// after one turn every bit is clear.
func (p *Clock) Evict() *node.Node {
	if p.list.Weight() <= p.max {
		return nil
	}
	for {
		v := p.list.Front()
		if v.Flags&clockReferenced == 0 {
			p.list.Remove(v)
			v.Queue = 0
			return v
		}
		v.Flags &^= clockReferenced
		p.list.MoveToBack(v)
	}
}
