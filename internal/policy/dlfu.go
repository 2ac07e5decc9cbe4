package policy

import (
	"fmt"
	"math"

	"github.com/cachekit/cachekit/internal/node"
)

// DefaultDLFUDecay is DLFU's parameter when the spec gives none: scores
// decay by a factor e over 4 × the cache's capacity in references, close
// to the time constant (about 3.5 × the capacity) that Baarda derived from
// the best λ Lee et al. measured for LRFU.
const DefaultDLFUDecay = 4.0

// dlfuRescale is how large the increment may grow before every score is
// scaled back down. Scores stay below increment × (time constant + 1),
// far from the largest float64.
const dlfuRescale = 0x1p512

func init() {
	Register("dlfu", "decaying LFU (Baarda): each reference adds an exponentially growing increment, so old hits decay; parameter = time constant in multiples of the capacity (default 4, inf = plain LFU)", func(c Config) (Policy, error) {
		m := c.Param
		if math.IsNaN(m) {
			m = DefaultDLFUDecay
		}
		if !(m > 0) {
			return nil, fmt.Errorf("policy dlfu: decay parameter %v must be positive (or inf for no decay)", c.Param)
		}
		return NewDLFU(c.Max, c.Weighted, m), nil
	})
}

// DLFU is decaying LFU, after Donovan Baarda's DLFUCache and its use in
// Konrad Reiche's "Building a Highly Concurrent Cache in Go". Every entry
// has a score; a new entry scores the current increment, and each read or
// write adds the current increment to it. After every reference the
// increment grows by the factor 1 + 1/T, so a hit's weight relative to
// newer hits decays exponentially with time constant T references: the
// score is an exponentially decaying reference count (LRFU, computed
// without powers). The lowest score is evicted, the least recently used
// first among equals.
//
// T is m × the capacity in entries: Max when the cache is bounded by
// count, the current number of entries when weights vary. m = +Inf means
// no decay, plain LFU; a T under one reference acts as T = 1, where the
// increment doubles at each reference and DLFU is LRU. When the increment passes 2^512, every score and
// the increment are scaled down by 2^-512 (an exact power of two, so the
// order is kept except for scores that underflow to zero, which are
// negligible anyway) and the heap is rebuilt: O(n) once per 354·T
// references.
//
// The entry being inserted is kept out of the victims' choice until the
// weight is within the maximum (see heapSpace): DLFU evicts before it
// inserts, and the new entry's single increment would otherwise often be
// the lowest score.
//
// DLFU is not safe for concurrent use.
type DLFU struct {
	heapSpace
	weighted bool
	m        float64 // time constant in multiples of the capacity
	incr     float64 // what the next reference adds
	grow     float64 // 1 + 1/T, when not weighted
	clock    uint64  // references so far, the tie-breaker
}

// NewDLFU returns a DLFU policy for at most max weight whose time
// constant is m times the capacity in entries (m > 0; +Inf for none).
// weighted says whether node weights vary.
func NewDLFU(max uint64, weighted bool, m float64) *DLFU {
	p := &DLFU{heapSpace: newHeapSpace(max), weighted: weighted, m: m, incr: 1}
	p.grow = dlfuGrowth(m, float64(p.max))
	return p
}

// dlfuGrowth returns the increment's growth per reference, 1 + 1/T for
// T = m × entries, at most 2: when the increment doubles, a reference
// already outweighs all older ones together (LRU), and a faster growth
// would change nothing but the risk of overflow.
func dlfuGrowth(m, entries float64) float64 {
	return min(1+1/(m*entries), 2)
}

// Score returns n's current score and the current increment (for tests).
func (p *DLFU) Score(n *node.Node) (score, incr float64) {
	return p.heap.items[p.heap.index(n)].key, p.incr
}

// tick advances time by one reference: the increment grows.
func (p *DLFU) tick() {
	p.clock++
	grow := p.grow
	if p.weighted {
		grow = dlfuGrowth(p.m, float64(max(p.heap.len(), 1)))
	}
	p.incr *= grow
	if p.incr > dlfuRescale {
		p.rescale()
	}
}

// rescale scales every score and the increment down by 2^-512.
func (p *DLFU) rescale() {
	const scale = 0x1p-512
	for i := range p.heap.items {
		p.heap.items[i].key *= scale
	}
	p.incr *= scale
	p.heap.heapify() // underflowed scores now tie: seq decides
}

// Add implements Policy.
func (p *DLFU) Add(n *node.Node) {
	p.add(n, p.incr, p.clock+1, 0)
	p.tick()
}

// Access implements Policy.
func (p *DLFU) Access(n *node.Node) {
	i := p.heap.index(n)
	e := p.heap.items[i]
	e.key += p.incr
	e.seq = p.clock + 1
	p.heap.fix(i)
	p.tick()
}

// Replace implements Policy: n inherits old's score, and the write counts
// as a reference.
func (p *DLFU) Replace(old, n *node.Node) {
	p.swap(old, n)
	p.Access(n)
	p.settle()
}

// Evict implements Policy.
func (p *DLFU) Evict() *node.Node {
	n, _, _ := p.popOver()
	p.settle()
	return n
}
