package policy

import "math/bits"

// sketch is a count-min sketch of 4-bit counters that estimates how often a
// key hash was seen recently. Four counters per key, each in a different
// 64-bit word; the estimate is the minimum of the four. When the number of
// increments reaches period times the capacity, every counter is halved,
// so the sketch forgets old popularity (the "reset" of TinyLFU).
//
// A key's four words lie in one block of eight (64 bytes, one cache line):
// counter i is in word 2i or 2i+1 of the block. An update or an estimate
// then touches one line instead of four, which matters once the sketch
// outgrows the CPU's caches (1.4 MB for 100,000 keys), as the policy reads
// two keys' counters and updates one for every new key. Measured: the
// evicting uniform benchmark (bench, BenchmarkEvict, 2 goroutines, all
// reads) took 8.6% less time per operation; the trace suite's mean fell
// from 49.58% (14 points below the best peer − 0.1) to 49.51% (15).
// Three hash choices gave 49.39–49.51% blocked and 49.54–49.58% with a
// word per counter anywhere in the table: a small loss that we take, as
// Caffeine does, for one cache miss per key instead of four.
//
// A sketch may start narrower than its full width and grow (see grow): a
// key's block is its block in the full-width table of span blocks, shifted
// right by shift, so that block b of a table lies in block b/2 of the
// table before it.
type sketch struct {
	table  []uint64
	blocks uint64 // len(table) / blockWords
	span   uint64 // blocks of the full-width table
	shift  uint   // how many times the table has still to double
	// old is the table before the last growth, while the keys' counts are
	// carried from it (see grow); nil otherwise.
	old     []uint64
	added   uint64
	resetAt uint64
	keys    int // the capacity it was sized for

	// A halving of a large table is a sweep (see startSweep): sweeping
	// says one is underway, sweep is the next block it halves, up whether
	// it rounds up (halveUp) or down (reset). A block past the sweep that
	// a key's access halved early has its bit set in ahead. A reset's
	// sweep counts the odd counters it meets in odd, and before is the
	// count of increments when it started.
	sweeping   bool
	up         bool
	sweep      uint64
	ahead      []uint64
	odd        uint64
	before     uint64
	sweepWords int // the smallest table that is halved by a sweep
}

// sweepMinWords is the smallest table halved by a sweep rather than in one
// pass: 512 kB, which one pass halves in about 0.1 ms (a sketch sized for
// 10 million keys, 140 MB, took 20 ms to reset and 10 ms to halve up).
const sweepMinWords = 1 << 16

// sweepBlocks is how many blocks a sweep halves per increment: a table of
// n keys (1.75 n words) is swept in 0.11 n increments, long before its
// next halving (a reset comes period × n / 2 increments after the last,
// 5 n at least; the halvings of a filling cache at each doubling of its
// population).
const sweepBlocks = 2

// blockWords is the number of words in a block: one 64-byte cache line.
const blockWords = 8

// init sizes the sketch for capacity keys with about words words of
// counters (rounded up to whole blocks, at least two), halving its counters
// every period × capacity increments. The table starts 2^shift times
// narrower (see grow).
func (s *sketch) init(capacity, words int, period uint64, shift uint) {
	s.span = uint64(max(2, (words+blockWords-1)/blockWords))
	s.shift = shift
	s.blocks = s.width()
	s.table = make([]uint64, s.blocks*blockWords)
	s.old = nil
	s.added = 0
	s.keys = capacity
	s.resetAt = max(period*uint64(capacity), 16*period)
	s.sweeping, s.ahead = false, nil
	s.sweepWords = sweepMinWords
}

// width returns the number of blocks of a table at the current shift: one
// more than the largest block of the full-width table shifted right.
func (s *sketch) width() uint64 { return (s.span-1)>>s.shift + 1 }

// grow doubles the table's width (the last step adds what is left to the
// full width), unless it is full. The new table starts empty; the old one
// stays, and while it does (until carried), increments count in both and
// an estimate is the larger of the two, so no key's estimate falls. The
// owner then carries each key it tracks to the new table (carry) and calls
// carried, a few keys at a time rather than in one long pause.
//
// Why not copy the old table's counters instead, each block into the two
// it splits into? That keeps every key's estimate with no key hashed
// again, but also every collision of the narrow table: a block of the
// grown table holds the counts of its sibling's keys, and of its
// ancestors' keys at every earlier width. docs/hit-ratio-notes.md, session
// 20, measured the cost: a TinyLFU of 1,000,000 entries filled by growth
// and then swept by twice as many keys seen once kept 89.6% of its keys,
// against 98.4% with its sketch at full width from the start; carrying
// the tracked keys gives the grown table the collisions of a table of its
// width.
func (s *sketch) grow() {
	if s.shift == 0 {
		return
	}
	s.finishSweep() // the old table is read as it is
	s.old = s.table
	s.shift--
	s.blocks = s.width()
	s.table = make([]uint64, s.blocks*blockWords)
}

// widen doubles the full width of a table that has reached it (shift 0)
// and the keys it is sized for: the growth of a weighted cache's sketch,
// whose population has no bound. As with grow, the new table starts empty
// and the owner carries the keys it tracks; a key's block in the doubled
// span is 2b or 2b+1 for its block b in the old one (see index), so
// oldLine finds it.
func (s *sketch) widen() {
	s.finishSweep()
	s.old = s.table
	s.span *= 2
	s.keys *= 2
	s.resetAt *= 2
	s.blocks = s.width()
	s.table = make([]uint64, s.blocks*blockWords)
}

// carry raises h's counters in the grown table to h's estimate in the old
// one, if the sketch is growing. Carrying a key twice changes nothing.
func (s *sketch) carry(h uint64) {
	if s.old == nil {
		return
	}
	b, y := s.index(h)
	s.ready(b)
	l := s.block(b)
	e := estimateIn(s.oldLine(h), y)
	for i := range 4 {
		w, sh := slot(y, i)
		if (l[w&7]>>sh)&15 < e {
			l[w&7] = l[w&7]&^(15<<sh) | e<<sh
		}
	}
}

// peek reads h's blocks in both tables of a growing sketch, as carry will,
// and returns a word of each.
func (s *sketch) peek(h uint64) uint64 {
	l, _ := s.line(h)
	return l[0] + s.oldLine(h)[0]
}

// carried ends a growth: every key that counts has been carried.
func (s *sketch) carried() { s.old = nil }

// oldLine returns h's block in the table before the growth (s.old must not
// be nil).
func (s *sketch) oldLine(h uint64) *[blockWords]uint64 {
	b, _ := s.index(h)
	return (*[blockWords]uint64)(s.old[b/2*blockWords:])
}

// keysNow returns the number of keys the table is sized for at its current
// width: the capacity divided by 2^shift, rounded up.
func (s *sketch) keysNow() int {
	return (s.keys-1)>>s.shift + 1
}

// pow2Words returns the smallest power of two, 16 at least, that is not
// below capacity: the width of a sketch of one word per key.
func pow2Words(capacity int) int {
	n := 16
	for n < capacity {
		n <<= 1
	}
	return n
}

// capacity returns the number of keys the sketch was sized for.
func (s *sketch) capacity() int { return s.keys }

// line returns h's block and the bits that pick its counters in the
// block's words: for counter i, bit i picks the word of the pair and bits
// 4+4i..7+4i the nibble. It is for reading ahead only: while a sweep is
// underway the block may not be halved yet (see ready), so the methods
// that read or write counters take index, ready and block one by one,
// which keeps each of them small enough to inline.
func (s *sketch) line(h uint64) (*[blockWords]uint64, uint64) {
	b, y := s.index(h)
	return s.block(b), y
}

// ready halves block b if a sweep is underway and has not halved it yet,
// so that every access sees the table as a halving in one pass would
// have left it. Every read or write of counters calls it first.
func (s *sketch) ready(b uint64) {
	if s.sweeping && b >= s.sweep {
		s.halveAhead(b)
	}
}

// block returns block b of the table.
func (s *sketch) block(b uint64) *[blockWords]uint64 {
	return (*[blockWords]uint64)(s.table[b*blockWords:])
}

// index returns h's block number in the table and the bits that pick its
// counters (see line).
func (s *sketch) index(h uint64) (uint64, uint64) {
	x := h * 0x9e3779b97f4a7c15
	x ^= x >> 29
	y := x * 0xbf58476d1ce4e5b9
	y ^= y >> 32
	return x >> 32 * s.span >> 32 >> s.shift, y // any number of blocks
}

// slot returns the word of the block and the bit shift of counter i, given
// the bits that line returns.
func slot(y uint64, i int) (uint64, uint) {
	return uint64(2*i) + y>>i&1, uint(y>>(4+4*i)&15) << 2 // 16 nibbles per word
}

// estimate returns the estimated frequency of h, 0 to 15: while the sketch
// grows, the larger of its estimates in the new and the old table.
func (s *sketch) estimate(h uint64) int {
	b, y := s.index(h)
	s.ready(b)
	l := s.block(b)
	e := estimateIn(l, y)
	if s.old != nil {
		e = max(e, estimateIn(s.oldLine(h), y))
	}
	return int(e)
}

// estimateIn returns the smallest of the four counters that y picks in
// block l.
func estimateIn(l *[blockWords]uint64, y uint64) uint64 {
	m := uint64(15)
	for i := range 4 {
		w, sh := slot(y, i)
		if c := (l[w&7] >> sh) & 15; c < m {
			m = c
		}
	}
	return m
}

// increment counts one occurrence of h in each of its four counters that is
// not saturated. Conservative update (raising only the minimum counters)
// was measured and lost: on lirs-loop at 250 entries the cache's hit ratio
// fell from 24.3% to 15.5%, and the mean over the trace suite by 0.5 point.
func (s *sketch) increment(h uint64) {
	b, y := s.index(h)
	s.ready(b)
	l := s.block(b)
	added := incrementIn(l, y)
	if s.old != nil {
		added = incrementIn(s.oldLine(h), y) || added
	}
	if !added {
		return
	}
	if s.sweeping {
		s.advance(sweepBlocks)
	}
	s.added++
	if s.added >= s.resetAt {
		s.reset()
	}
}

// incrementIn adds one to each of the four counters that y picks in block
// l that is not saturated, and reports whether it added any.
func incrementIn(l *[blockWords]uint64, y uint64) bool {
	added := false
	for i := range 4 {
		w, sh := slot(y, i)
		if (l[w&7]>>sh)&15 < 15 {
			l[w&7] += 1 << sh
			added = true
		}
	}
	return added
}

// reset halves every counter. The increments it takes off the count are
// the odd counters' (a key's four counters each lose half a count), counted
// in the old table while the sketch grows: the new one does not yet hold
// every key. A large table is halved by a sweep (see startSweep).
func (s *sketch) reset() {
	s.finishSweep()
	if s.old == nil && len(s.table) >= s.sweepWords {
		s.startSweep(false)
		return
	}
	odd := 0
	for i, w := range s.old {
		odd += bits.OnesCount64(w & 0x1111111111111111)
		s.old[i] = halveWord(w, false)
	}
	for i, w := range s.table {
		if s.old == nil {
			odd += bits.OnesCount64(w & 0x1111111111111111)
		}
		s.table[i] = halveWord(w, false)
	}
	s.added = (s.added - uint64(odd)/4) / 2
}

// halveUp halves every counter, rounding up, so that a key seen at all
// keeps a count of at least one. The count of increments is left as is:
// the periodic reset stays on its schedule. A large table is halved by a
// sweep (see startSweep).
func (s *sketch) halveUp() {
	s.finishSweep()
	if s.old == nil && len(s.table) >= s.sweepWords {
		s.startSweep(true)
		return
	}
	for _, part := range [2][]uint64{s.table, s.old} {
		for i, w := range part {
			part[i] = halveWord(w, true)
		}
	}
}

// halveWord halves the sixteen counters of w, rounding up or down.
func halveWord(w uint64, up bool) uint64 {
	h := (w >> 1) & 0x7777777777777777
	if up {
		h += w & 0x1111111111111111
	}
	return h
}

// startSweep starts halving the table, rounding up or down.
//
// A halving in one pass over a large table holds the cache's maintenance
// lock for as long as the pass takes, and every writer waiting for
// maintenance with it: BenchmarkSketchReset's sketch of 10 million keys
// (140 MB) took 20 ms to reset, and its longest increment with a sweep
// took 0.2 to 2.4 ms (the machine's own hiccups). So a table of
// sweepWords or more is halved by a sweep instead: each increment that
// follows halves the next sweepBlocks blocks, and an access to a block
// the sweep has not reached halves that block first (and marks it in
// ahead, so the sweep passes it by). Every estimate and every increment
// then sees the counters a halving in one pass would have left, and the
// count of increments ends the same, so the sketch behaves exactly as
// one that halves in one pass (TestSketchSweepIsExact). A sweep never
// overlaps a growth: growing finishes the sweep, and a sketch that is
// growing halves in one pass.
func (s *sketch) startSweep(up bool) {
	if n := int(s.blocks+63) / 64; len(s.ahead) < n {
		s.ahead = make([]uint64, n)
	}
	s.sweeping, s.up, s.sweep = true, up, 0
	if !up {
		s.before, s.odd, s.added = s.added, 0, 0
	}
}

// halveAhead halves block b, past the sweep, unless it already did.
func (s *sketch) halveAhead(b uint64) {
	bit := uint64(1) << (b & 63)
	if s.ahead[b>>6]&bit != 0 {
		return
	}
	s.ahead[b>>6] |= bit
	s.halveBlock(b)
}

// halveBlock halves the counters of block b.
func (s *sketch) halveBlock(b uint64) {
	l := s.block(b)
	for i, w := range l {
		if !s.up {
			s.odd += uint64(bits.OnesCount64(w & 0x1111111111111111))
		}
		l[i] = halveWord(w, s.up)
	}
}

// advance halves the sweep's next n blocks, and ends the sweep after the
// last: a reset's count of increments is then what a halving in one pass
// would have made it, plus the increments since.
func (s *sketch) advance(n uint64) {
	for end := min(s.sweep+n, s.blocks); s.sweep < end; s.sweep++ {
		b := s.sweep
		if bit := uint64(1) << (b & 63); s.ahead[b>>6]&bit != 0 {
			s.ahead[b>>6] &^= bit
		} else {
			s.halveBlock(b)
		}
	}
	if s.sweep < s.blocks {
		return
	}
	s.sweeping = false
	if !s.up {
		s.added += (s.before - s.odd/4) / 2
	}
}

// finishSweep ends the sweep underway, if any, at once.
func (s *sketch) finishSweep() {
	if s.sweeping {
		s.advance(s.blocks)
	}
}
