// Package histogram records latencies in a fixed-size, pointer-free
// histogram with logarithmic buckets, so that recording allocates nothing
// and the garbage collector has nothing in it to scan: the request loops
// whose tail latencies the GC benchmarks report must not add to what they
// measure.
package histogram

import (
	"math/bits"
	"time"
)

// subBits is log2 of the number of buckets per power of two: 64 buckets
// per doubling bound the relative error of a quantile by 1/64 (1.6%).
const subBits = 6

const (
	sub     = 1 << subBits
	buckets = (64 - subBits + 1) * sub
)

// Histogram counts durations. The zero value is empty and ready; it is
// not safe for concurrent use.
type Histogram struct {
	counts [buckets]uint64
	n      uint64
	max    time.Duration
}

// index returns v's bucket: v itself below sub, else the power of two
// and the next subBits bits below the leading one.
func index(v uint64) int {
	if v < sub {
		return int(v)
	}
	exp := bits.Len64(v) - 1 - subBits // ≥ 0
	return (exp+1)*sub + int(v>>exp) - sub
}

// lower returns the smallest value of bucket i.
func lower(i int) uint64 {
	if i < sub {
		return uint64(i)
	}
	exp := i/sub - 1
	return uint64(i%sub+sub) << exp
}

// Record adds d (negative durations count as 0).
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[index(v)]++
	h.n++
	h.max = max(h.max, d)
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest recorded duration.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the q-quantile (0 < q ≤ 1) of the recorded durations:
// the lower bound of the bucket holding the ⌈q·n⌉-th smallest value, so
// within 1.6% below the true value (the maximum for q = 1), or 0 if
// nothing was recorded.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q >= 1 {
		return h.max
	}
	rank := uint64(q * float64(h.n))
	if float64(rank) < q*float64(h.n) {
		rank++
	}
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(lower(i))
		}
	}
	return h.max
}

// Merge adds o's durations to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}
