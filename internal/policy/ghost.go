package policy

import "math/bits"

// ghostFilter remembers, approximately, the key hashes of the last
// candidates TinyLFU refused to admit, so that one refused again soon after
// can be admitted on recency (see TinyLFU.admit). Like 2Q's A1out or ARC's
// ghost lists it keeps no entries, only key hashes; unlike them it keeps no
// list either: two Bloom filters of 12 bits per key and four probes (about
// 0.7% false positives), the current one taking the new keys and the
// previous one still answering, swapped and cleared when the current one
// holds gen keys. A key is remembered for the next gen to 2 × gen refusals.
// With gen a third of the cache's maximum (ghostGenShare) that is 8 bits
// per entry of the maximum, 1 MB for a million entries, against the
// sketch's 8 bytes (both stop growing at 2^24 entries).
type ghostFilter struct {
	cur, prev []uint64
	nbits     uint64 // bits in each filter
	n, gen    int    // keys added to cur; keys per filter
}

// ghostBitsPerKey sizes each filter. Measured on the trace suite (mean /
// points below the best peer − 0.1): 10 bits 49.47 / 15, 12 bits 49.48 /
// 14, 16 bits 49.48 / 14.
const ghostBitsPerKey = 12

// newGhostFilter returns a filter whose generations hold gen keys each.
func newGhostFilter(gen uint64) *ghostFilter {
	gen = max(gen, 1)
	words := (gen*ghostBitsPerKey + 63) / 64
	return &ghostFilter{cur: make([]uint64, words), prev: make([]uint64, words),
		nbits: words * 64, gen: int(gen)}
}

// probes returns the first probe's seed and the step between probes
// (double hashing), decorrelated from the sketch's and the miniatures' use
// of the same hash. A probe's position is the high word of seed × nbits,
// so the step must spread over all 64 bits: a small one would put the
// four probes in the same bit.
func (g *ghostFilter) probes(h uint64) (x, step uint64) {
	x = h * 0x9fb21c651e98df25
	x ^= x >> 31
	step = x * 0xc2b2ae3d27d4eb4f
	return x, step ^ step>>29 | 1
}

// has reports whether h is (probably) among the keys added lately.
func (g *ghostFilter) has(h uint64) bool {
	x, step := g.probes(h)
	inCur, inPrev := true, true
	for range 4 {
		i, _ := bits.Mul64(x, g.nbits) // a position in [0, nbits)
		w, b := i>>6, uint64(1)<<(i&63)
		inCur = inCur && g.cur[w]&b != 0
		inPrev = inPrev && g.prev[w]&b != 0
		x += step
	}
	return inCur || inPrev
}

// add remembers h.
func (g *ghostFilter) add(h uint64) {
	if g.n >= g.gen {
		g.cur, g.prev = g.prev, g.cur
		clear(g.cur)
		g.n = 0
	}
	g.n++
	x, step := g.probes(h)
	for range 4 {
		i, _ := bits.Mul64(x, g.nbits)
		g.cur[i>>6] |= 1 << (i & 63)
		x += step
	}
}
