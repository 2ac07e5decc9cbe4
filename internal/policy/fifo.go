package policy

import "github.com/cachekit/cachekit/internal/node"

func init() {
	Register("fifo", "first in, first out: evicts the entry added longest ago, ignoring reads", func(c Config) (Policy, error) {
		if err := noParam("fifo", c); err != nil {
			return nil, err
		}
		return NewFIFO(c.Max), nil
	})
}

// FIFO evicts entries in the order they were added. Reads change nothing;
// a write (Replace) keeps the entry's place in the queue.
//
// FIFO is not safe for concurrent use.
type FIFO struct {
	list node.List
	max  uint64
}

// NewFIFO returns a FIFO policy for at most max weight.
func NewFIFO(max uint64) *FIFO {
	if max == 0 {
		max = 1
	}
	return &FIFO{max: max}
}

// Len implements Policy.
func (p *FIFO) Len() int { return p.list.Len() }

// Weight implements Policy.
func (p *FIFO) Weight() uint64 { return p.list.Weight() }

// Max implements Policy.
func (p *FIFO) Max() uint64 { return p.max }

// Add implements Policy.
func (p *FIFO) Add(n *node.Node) {
	n.Queue = qList
	p.list.PushBack(n)
}

// Access implements Policy; FIFO ignores reads.
func (p *FIFO) Access(*node.Node) {}

// Remove implements Policy.
func (p *FIFO) Remove(n *node.Node) {
	p.list.Remove(n)
	n.Queue = 0
}

// Replace implements Policy: n keeps old's place in the queue.
func (p *FIFO) Replace(old, n *node.Node) {
	n.Queue = qList
	p.list.Replace(old, n)
	old.Queue = 0
}

// Evict implements Policy.
func (p *FIFO) Evict() *node.Node {
	if p.list.Weight() <= p.max {
		return nil
	}
	v := p.list.Front()
	p.list.Remove(v)
	v.Queue = 0
	return v
}
