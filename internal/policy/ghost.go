package policy

import "math/bits"

// ghostFilter remembers, approximately, the key hashes of the last
// candidates TinyLFU refused to admit, so that one refused again soon after
// can be admitted on recency (see TinyLFU.admit). Like 2Q's A1out or ARC's
// ghost lists it keeps no entries, only key hashes; unlike them it keeps no
// list either: two Bloom filters of 12 bits per key and four probes in one
// block (see ghostBlockWords; about 0.7% false positives each), the current
// one taking the new keys and the previous one still answering, swapped and
// cleared when the current one holds gen keys. A key is remembered for the
// next gen to 2 × gen refusals. With gen a third of the cache's maximum
// (ghostGenShare) that is 8 bits per entry of the maximum, 1 MB for a
// million entries, against the sketch's 8 bytes (both stop growing at 2^24
// entries).
type ghostFilter struct {
	cur, prev []uint64
	blocks    uint64 // blocks of ghostBlockWords words in each filter
	n, gen    int    // keys added to cur; keys per filter
}

// ghostBitsPerKey sizes each filter. Measured on the trace suite (mean /
// points below the best peer − 0.1): 10 bits 49.47 / 15, 12 bits 49.48 /
// 14, 16 bits 49.48 / 14.
const ghostBitsPerKey = 12

// ghostBlockWords is the size of a filter's blocks, in words: a key's four
// bits are all in one block of 512 bits, one cache line if the filter is
// aligned (a large one is), so that adding a key or asking for one is one
// cache miss per filter, not four. Blocks cost a few false positives: with
// both filters full, a key never added was claimed 1.39-1.42% of the time
// against 1.24-1.30% with the probes spread over the whole filter (a
// million keys, generations of 1,000 to 333,333 keys). The trace suite did
// not move beyond its noise (TestSuite, mean / points below the best peer
// per run: hash seeds 0-7 49.72 / 12.25 -> 49.73 / 12.25, seeds 8-15
// 49.71 / 12.38 -> 49.71 / 12.75, arc-p3 @100000 going 40.80 -> 40.61 on
// its best peer's 40.67), and on BenchmarkEvict (uniform, 90% reads, 32
// goroutines) add's share of the CPU profile went from 5.4-5.6% (two
// profiles) to 3.4-5.4% (three): the four misses had overlapped.
const ghostBlockWords = 8

// newGhostFilter returns a filter whose generations hold gen keys each.
func newGhostFilter(gen uint64) *ghostFilter {
	gen = max(gen, 1)
	blocks := (gen*ghostBitsPerKey + 64*ghostBlockWords - 1) / (64 * ghostBlockWords)
	words := blocks * ghostBlockWords
	return &ghostFilter{cur: make([]uint64, words), prev: make([]uint64, words),
		blocks: blocks, gen: int(gen)}
}

// probes returns where h's four bits are: the block's first word, and the
// four bits' positions in the block, 9 bits each, in the low 36 bits of
// pos. Both come from a remix of h, decorrelated from the sketch's and the
// miniatures' use of the same hash: the block from the high word of
// x × blocks, the positions from the high bits of another product.
func (g *ghostFilter) probes(h uint64) (first, pos uint64) {
	x := h * 0x9fb21c651e98df25
	x ^= x >> 31
	b, _ := bits.Mul64(x, g.blocks)
	y := x * 0xc2b2ae3d27d4eb4f
	return b * ghostBlockWords, y >> 28
}

// has reports whether h is (probably) among the keys added lately.
func (g *ghostFilter) has(h uint64) bool {
	first, pos := g.probes(h)
	cur, prev := g.cur[first:first+ghostBlockWords], g.prev[first:first+ghostBlockWords]
	inCur, inPrev := true, true
	for range 4 {
		w, b := pos>>6&(ghostBlockWords-1), uint64(1)<<(pos&63)
		inCur = inCur && cur[w]&b != 0
		inPrev = inPrev && prev[w]&b != 0
		pos >>= 9
	}
	return inCur || inPrev
}

// reset forgets every key.
func (g *ghostFilter) reset() {
	clear(g.cur)
	clear(g.prev)
	g.n = 0
}

// add remembers h.
func (g *ghostFilter) add(h uint64) {
	if g.n >= g.gen {
		g.cur, g.prev = g.prev, g.cur
		clear(g.cur)
		g.n = 0
	}
	g.n++
	first, pos := g.probes(h)
	cur := g.cur[first : first+ghostBlockWords]
	for range 4 {
		cur[pos>>6&(ghostBlockWords-1)] |= 1 << (pos & 63)
		pos >>= 9
	}
}
