package policy

import "github.com/cachekit/cachekit/internal/node"

func init() {
	Register("sieve", "SIEVE (NSDI'24): FIFO with a visited bit and a hand that sifts out unvisited entries in place", func(c Config) (Policy, error) {
		if err := noParam("sieve", c); err != nil {
			return nil, err
		}
		return NewSieve(c.Max), nil
	})
}

// sieveVisited is the bit of node.Flags that SIEVE sets on a use.
const sieveVisited = 1

// Sieve is SIEVE (Zhang, Yang, Yue, Vigfusson and Rashmi, "SIEVE is
// Simpler than LRU", NSDI 2024). Entries sit in one FIFO queue in the order
// they were added (front = oldest) and never move. A use sets the entry's
// visited bit. To evict, the hand walks from where it stopped toward newer
// entries (wrapping from the newest to the oldest), clearing visited bits,
// and evicts the first unvisited entry; it then rests on the next newer one.
// Unlike CLOCK, survivors keep their place, so new entries sit between the
// hand and the newest end and are sifted out quickly if unused.
//
// Sieve is not safe for concurrent use.
type Sieve struct {
	list  node.List
	hand  *node.Node // where the next search starts; nil means the front
	fresh *node.Node // the node being inserted, until Evict returns nil
	max   uint64
}

// NewSieve returns a SIEVE policy for at most max weight.
func NewSieve(max uint64) *Sieve {
	if max == 0 {
		max = 1
	}
	return &Sieve{max: max}
}

// Len implements Policy.
func (p *Sieve) Len() int { return p.list.Len() }

// Weight implements Policy.
func (p *Sieve) Weight() uint64 { return p.list.Weight() }

// Max implements Policy.
func (p *Sieve) Max() uint64 { return p.max }

// Add implements Policy.
func (p *Sieve) Add(n *node.Node) {
	n.Queue = qList
	n.Flags = 0
	p.list.PushBack(n)
	p.fresh = n
	p.settle()
}

// settle ends the insertion once the weight is within the maximum, as
// Evict does when it returns nil: an owner may skip that call (the cache
// does), and an insertion left open would keep its entry out of the
// hand's reach, and move where the hand rests, until the next Add.
func (p *Sieve) settle() {
	if p.list.Weight() <= p.max {
		p.fresh = nil
	}
}

// Access implements Policy.
func (p *Sieve) Access(n *node.Node) { n.Flags |= sieveVisited }

// Remove implements Policy.
func (p *Sieve) Remove(n *node.Node) {
	if p.hand == n {
		p.hand = p.next(n) // never onto the entry being inserted
	}
	if p.fresh == n {
		p.fresh = nil
	}
	p.list.Remove(n)
	n.Queue = 0
	p.settle()
}

// Replace implements Policy: n keeps old's place and counts as visited.
func (p *Sieve) Replace(old, n *node.Node) {
	n.Queue = qList
	n.Flags = sieveVisited
	p.list.Replace(old, n)
	if p.hand == old {
		p.hand = n
	}
	if p.fresh == old {
		p.fresh = n
	}
	old.Queue = 0
	p.settle()
}

// Evict implements Policy. The hand passes each entry at most twice.
//
// SIEVE evicts before it inserts, so the entry being inserted sits beyond
// the hand's reach during that eviction. Here the owner adds first, so the
// hand treats the entry added last as past the newest end: it wraps to the
// oldest entry there, and never rests on it.
func (p *Sieve) Evict() *node.Node {
	if p.list.Weight() <= p.max {
		p.fresh = nil // the insertion is over
		return nil
	}
	v := p.hand
	if v == nil {
		v = p.list.Front()
	}
	for v.Flags&sieveVisited != 0 {
		v.Flags &^= sieveVisited
		if v = p.next(v); v == nil {
			v = p.list.Front()
		}
	}
	p.hand = p.next(v)
	if v == p.fresh {
		p.fresh = nil
	}
	p.list.Remove(v)
	v.Queue = 0
	p.settle()
	return v
}

// next returns the entry after v in the hand's walk, or nil at the end.
func (p *Sieve) next(v *node.Node) *node.Node {
	n := v.Next()
	if n == p.fresh {
		return nil
	}
	return n
}
