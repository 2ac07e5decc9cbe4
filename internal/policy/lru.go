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

// LRU evicts the least recently used entry: one list, oldest use at the
// front; reads and writes move an entry to the back.
//
// LRU is not safe for concurrent use.
type LRU struct {
	list node.List
	max  uint64
}

// NewLRU returns an LRU policy for at most max weight.
func NewLRU(max uint64) *LRU {
	if max == 0 {
		max = 1
	}
	return &LRU{max: max}
}

// Len implements Policy.
func (p *LRU) Len() int { return p.list.Len() }

// Weight implements Policy.
func (p *LRU) Weight() uint64 { return p.list.Weight() }

// Max implements Policy.
func (p *LRU) Max() uint64 { return p.max }

// Add implements Policy.
func (p *LRU) Add(n *node.Node) {
	n.Queue = qList
	p.list.PushBack(n)
}

// Access implements Policy.
func (p *LRU) Access(n *node.Node) { p.list.MoveToBack(n) }

// Remove implements Policy.
func (p *LRU) Remove(n *node.Node) {
	p.list.Remove(n)
	n.Queue = 0
}

// Replace implements Policy. A write is a use: n becomes the most recent.
func (p *LRU) Replace(old, n *node.Node) {
	n.Queue = qList
	p.list.Replace(old, n)
	old.Queue = 0
	p.list.MoveToBack(n)
}

// Evict implements Policy.
func (p *LRU) Evict() *node.Node {
	if p.list.Weight() <= p.max {
		return nil
	}
	v := p.list.Front()
	p.list.Remove(v)
	v.Queue = 0
	return v
}
