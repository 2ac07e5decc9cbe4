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
type FIFO struct{ queue }

// NewFIFO returns a FIFO policy for at most max weight.
func NewFIFO(max uint64) *FIFO { return &FIFO{newQueue(max)} }

// Access implements Policy; FIFO ignores reads.
func (p *FIFO) Access(*node.Node) {}

// Replace implements Policy: n keeps old's place in the queue.
func (p *FIFO) Replace(old, n *node.Node) {
	p.replace(old, n)
	p.settle()
}
