package policy

import (
	"fmt"
	"math"

	"github.com/cachekit/cachekit/internal/node"
)

func init() {
	Register("lru", "least recently used: evicts the entry read or written longest ago", func(c Config) (Policy, error) {
		if err := noParam("lru", c); err != nil {
			return nil, err
		}
		return NewLRU(c.Max), nil
	})
}

// noParam reports an error if the spec gave a parameter to a policy that
// takes none.
func noParam(name string, c Config) error {
	if !math.IsNaN(c.Param) {
		return fmt.Errorf("policy %s takes no parameter", name)
	}
	return nil
}

// qList is the node.Queue value of the policies that keep a single list
// (LRU, FIFO, CLOCK, SIEVE).
const qList = 1

// queue is the part LRU and FIFO share: one list, the entry to evict next
// at the front, new entries at the back. They differ only in what a read
// and a write do to an entry's place.
//
// Both evict before they insert, so the entry being inserted is never the
// victim of its own insertion. Here the owner adds first, and may apply
// writes to other entries (LRU moves them to the back) before it evicts:
// the entry added last is passed over while the weight is over the
// maximum, and evicted only once it is alone (it weighs more than the
// maximum).
type queue struct {
	list  node.List
	fresh *node.Node // the node being inserted, until the weight is within the maximum
	max   uint64
}

func newQueue(limit uint64) queue { return queue{max: max(limit, 1)} }

// Len implements Policy.
func (p *queue) Len() int { return p.list.Len() }

// Weight implements Policy.
func (p *queue) Weight() uint64 { return p.list.Weight() }

// Max implements Policy.
func (p *queue) Max() uint64 { return p.max }

// Add implements Policy.
func (p *queue) Add(n *node.Node) {
	n.Queue = qList
	p.list.PushBack(n)
	p.fresh = n
	p.settle()
}

// settle ends the insertion once the weight is within the maximum, as
// Evict does when it returns nil (an owner may skip that call).
func (p *queue) settle() {
	if p.list.Weight() <= p.max {
		p.fresh = nil
	}
}

// Remove implements Policy.
func (p *queue) Remove(n *node.Node) {
	if p.fresh == n {
		p.fresh = nil
	}
	p.list.Remove(n)
	n.Queue = 0
	p.settle()
}

// replace puts n in old's place in the list; the caller settles.
func (p *queue) replace(old, n *node.Node) {
	n.Queue = qList
	p.list.Replace(old, n)
	if p.fresh == old {
		p.fresh = n
	}
	old.Queue = 0
}

// Evict implements Policy.
func (p *queue) Evict() *node.Node {
	if p.list.Weight() <= p.max {
		p.fresh = nil // the insertion is over
		return nil
	}
	v := p.list.Front()
	if v == p.fresh {
		if next := v.Next(); next != nil {
			v = next
		} else {
			p.fresh = nil // alone
		}
	}
	p.list.Remove(v)
	v.Queue = 0
	p.settle()
	return v
}

// LRU evicts the least recently used entry: one list, oldest use at the
// front; reads and writes move an entry to the back.
//
// LRU is not safe for concurrent use.
type LRU struct{ queue }

// NewLRU returns an LRU policy for at most max weight.
func NewLRU(max uint64) *LRU { return &LRU{newQueue(max)} }

// Access implements Policy.
func (p *LRU) Access(n *node.Node) { p.list.MoveToBack(n) }

// Replace implements Policy. A write is a use: n becomes the most recent.
func (p *LRU) Replace(old, n *node.Node) {
	p.replace(old, n)
	p.list.MoveToBack(n)
	p.settle()
}
