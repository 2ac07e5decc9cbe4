package policy

import (
	"fmt"
	"math"

	"github.com/cachekit/cachekit/internal/node"
)

// DefaultLRFULambda is LRFU's λ when the spec gives none: mostly LFU, with
// a little recency (the old references of an entry lose half their weight
// over about 1000 references to the cache).
const DefaultLRFULambda = 0.001

func init() {
	Register("lrfu", "LRFU (Lee et al. 2001): evicts the lowest combined recency and frequency value; parameter λ in [0,1], 0 = LFU, 1 = LRU, default 0.001", func(c Config) (Policy, error) {
		lambda := c.Param
		if math.IsNaN(lambda) {
			lambda = DefaultLRFULambda
		}
		if !(lambda >= 0 && lambda <= 1) {
			return nil, fmt.Errorf("policy lrfu: λ %v is not in [0, 1]", c.Param)
		}
		return NewLRFU(c.Max, lambda), nil
	})
}

// LRFU is Least Recently/Frequently Used (Lee, Choi, Kim, Noh, Min, Cho
// and Kim, "LRFU: A Spectrum of Policies that Subsumes the Least Recently
// Used and Least Frequently Used Policies", IEEE Trans. Computers 50(12),
// 2001). Time counts references to the cache (adds, reads and writes).
// Every past reference of an entry contributes F(age) = (1/2)^(λ·age) to
// its combined recency and frequency value, CRF; the entry with the lowest
// CRF now is evicted, the least recently used first among equals.
// λ = 0 is LFU (CRF = count); λ = 1 is LRU (one reference outweighs all
// older ones together).
//
// Because every CRF decays by the same factor as time passes, the order of
// the entries only changes when one of them is referenced. The heap
// therefore keys each entry by log2 CRF(t) + λ·t, which is the same for
// every time t: no key ever needs recomputing, no power of two overflows,
// and on a reference at time t the key becomes
// λ·t + log2(1 + 2^(key − λ·t)) (F(0) plus the decayed old CRF).
//
// The entry being inserted is kept out of the victims' choice until the
// weight is within the maximum (see heapSpace): LRFU evicts before it
// inserts, and the new entry's CRF of 1 would otherwise often be the
// lowest.
//
// LRFU is not safe for concurrent use.
type LRFU struct {
	heapSpace
	lambda float64
	clock  uint64 // references so far
}

// NewLRFU returns an LRFU policy with parameter lambda (in [0, 1]) for at
// most max weight.
func NewLRFU(max uint64, lambda float64) *LRFU {
	return &LRFU{heapSpace: newHeapSpace(max), lambda: lambda}
}

// Lambda returns λ.
func (p *LRFU) Lambda() float64 { return p.lambda }

// CRF returns n's combined recency and frequency value now (for tests).
func (p *LRFU) CRF(n *node.Node) float64 {
	return math.Exp2(p.heap.items[p.heap.index(n)].key - p.lambda*float64(p.clock))
}

// Add implements Policy: a new entry's CRF is F(0) = 1.
func (p *LRFU) Add(n *node.Node) {
	p.clock++
	p.add(n, p.lambda*float64(p.clock), p.clock, 0)
}

// Access implements Policy.
func (p *LRFU) Access(n *node.Node) {
	p.clock++
	now := p.lambda * float64(p.clock)
	i := p.heap.index(n)
	e := p.heap.items[i]
	// The old CRF, decayed to now, is 2^(key-now); add F(0) = 1.
	e.key = now + math.Log1p(math.Exp2(e.key-now))/math.Ln2
	e.seq = p.clock
	p.heap.fix(i)
}

// Replace implements Policy: n inherits old's CRF, and the write counts as
// a reference.
func (p *LRFU) Replace(old, n *node.Node) {
	p.swap(old, n)
	p.Access(n)
	p.settle()
}

// Evict implements Policy.
func (p *LRFU) Evict() *node.Node {
	n, _, _ := p.popOver()
	p.settle()
	return n
}
