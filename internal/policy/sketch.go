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
}

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
	s.old = s.table
	s.shift--
	s.blocks = s.width()
	s.table = make([]uint64, s.blocks*blockWords)
}

// carry raises h's counters in the grown table to h's estimate in the old
// one, if the sketch is growing. Carrying a key twice changes nothing.
func (s *sketch) carry(h uint64) {
	if s.old == nil {
		return
	}
	l, y := s.line(h)
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
// 4+4i..7+4i the nibble.
func (s *sketch) line(h uint64) (*[blockWords]uint64, uint64) {
	b, y := s.index(h)
	return (*[blockWords]uint64)(s.table[b*blockWords:]), y
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
	l, y := s.line(h)
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
	l, y := s.line(h)
	added := incrementIn(l, y)
	if s.old != nil {
		added = incrementIn(s.oldLine(h), y) || added
	}
	if !added {
		return
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
// every key.
func (s *sketch) reset() {
	odd := 0
	for i, w := range s.old {
		odd += bits.OnesCount64(w & 0x1111111111111111)
		s.old[i] = (w >> 1) & 0x7777777777777777
	}
	for i, w := range s.table {
		if s.old == nil {
			odd += bits.OnesCount64(w & 0x1111111111111111)
		}
		s.table[i] = (w >> 1) & 0x7777777777777777
	}
	s.added = (s.added - uint64(odd)/4) / 2
}

// halveUp halves every counter, rounding up, so that a key seen at all
// keeps a count of at least one. The count of increments is left as is:
// the periodic reset stays on its schedule.
func (s *sketch) halveUp() {
	for _, part := range [2][]uint64{s.table, s.old} {
		for i, w := range part {
			part[i] = (w>>1)&0x7777777777777777 + w&0x1111111111111111
		}
	}
}
