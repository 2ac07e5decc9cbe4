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
// CLOCK evicts before it inserts, so the entry being inserted is not on
// the clock face during that eviction, and takes the victim's place, behind
// every entry the hand passed. Here the owner adds first, so the entry
// added last stays at the back while the hand sweeps: the entries it
// spares go in front of it, and it is only evicted if it is alone (it
// weighs more than the maximum).
//
// Clock is not safe for concurrent use.
type Clock struct {
	list  node.List
	fresh *node.Node // the node being inserted, until the weight is within the maximum
	max   uint64
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
	p.fresh = n
	p.settle()
}

// settle ends the insertion once the weight is within the maximum, as
// Evict does when it returns nil (an owner may skip that call).
func (p *Clock) settle() {
	if p.list.Weight() <= p.max {
		p.fresh = nil
	}
}

// Access implements Policy.
func (p *Clock) Access(n *node.Node) { n.Flags |= clockReferenced }

// Remove implements Policy.
func (p *Clock) Remove(n *node.Node) {
	if p.fresh == n {
		p.fresh = nil
	}
	p.list.Remove(n)
	n.Queue = 0
	p.settle()
}

// Replace implements Policy: n keeps old's place and counts as used.
func (p *Clock) Replace(old, n *node.Node) {
	n.Queue = qList
	n.Flags = clockReferenced
	p.list.Replace(old, n)
	if p.fresh == old {
		p.fresh = n
	}
	old.Queue = 0
	p.settle()
}

// Evict implements Policy. The hand sweeps at most once around the clock:
// after one turn every bit is clear. The entry being inserted is at the
// back (Add puts it there, and nothing else moves to the back while it is
// being inserted but what the sweep puts in front of it), so the hand
// reaches it only once every other entry is gone.
func (p *Clock) Evict() *node.Node {
	if p.list.Weight() <= p.max {
		p.fresh = nil // the insertion is over
		return nil
	}
	for {
		v := p.list.Front()
		if v.Flags&clockReferenced == 0 || v == p.fresh {
			if v == p.fresh {
				p.fresh = nil
			}
			p.list.Remove(v)
			v.Queue = 0
			p.settle()
			return v
		}
		v.Flags &^= clockReferenced
		p.list.MoveToBack(v)
		if p.fresh != nil {
			p.list.MoveToBack(p.fresh) // v goes in front of it
		}
	}
}
