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
// right by shift, so that each block of a table splits into two of the
// table twice as wide, and growing keeps every key's counters (and the
// narrower table's collisions with them: docs/hit-ratio-notes.md, session
// 19, measures what that changes).
type sketch struct {
	table  []uint64
	blocks uint64 // len(table) / blockWords
	span   uint64 // blocks of the full-width table
	shift  uint   // how many times the table has still to double
	// While a grown table fills (see grow), old is the table before it and
	// the blocks of table from moved on are still in old: block b of table
	// is block b/2 of old. Otherwise old is nil and moved is blocks.
	old     []uint64
	moved   uint64
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
	s.old, s.moved = nil, s.blocks
	s.added = 0
	s.keys = capacity
	s.resetAt = max(period*uint64(capacity), 16*period)
}

// width returns the number of blocks of a table at the current shift: one
// more than the largest block of the full-width table shifted right.
func (s *sketch) width() uint64 { return (s.span-1)>>s.shift + 1 }

// grow doubles the table's width (the last step adds what is left to the
// full width), unless it is full. Every block of the old table splits into
// two of the new (block j of the new table is in block j/2 of the old),
// each a copy of the old block, so every key, counted or not, keeps its
// estimate, and no key is hashed again. The copy is spread over the next
// increments (moveBlocks each), so that growing a table of many megabytes
// is not one long pause; until a block is copied its keys use the old
// block, and an increment there counts for both halves, as before the
// growth. The reset schedule (added, resetAt) is kept.
func (s *sketch) grow() {
	if s.shift == 0 {
		return
	}
	s.move(s.blocks) // the growth before, if unfinished
	s.old, s.moved = s.table, 0
	s.shift--
	s.blocks = s.width()
	s.table = make([]uint64, s.blocks*blockWords)
}

// move copies up to n blocks of a growing table from the old one.
func (s *sketch) move(n uint64) {
	if s.old == nil {
		return
	}
	end := min(s.moved+n, s.blocks)
	for j := s.moved; j < end; j++ {
		copy(s.table[j*blockWords:(j+1)*blockWords], s.old[j/2*blockWords:])
	}
	s.moved = end
	if end == s.blocks {
		s.old = nil
	}
}

// moveBlocks is how many blocks of a growing table each increment copies:
// the table has about 0.22 blocks per key it is sized for (1.75 words of
// 8 per block), and the next growth comes after half as many new keys,
// each counted at least once, so the copy ends within a fifth of that.
const moveBlocks = 2

// parts returns the words that hold counters: the table, or while it grows,
// its copied blocks and the old table's blocks not yet copied in full.
func (s *sketch) parts() (a, b []uint64) {
	if s.old == nil {
		return s.table, nil
	}
	return s.table[:s.moved*blockWords], s.old[s.moved/2*blockWords:]
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

// line returns h's block (in the old table if it is not yet copied, see
// grow) and the bits that pick its counters in the block's words: for
// counter i, bit i picks the word of the pair and bits 4+4i..7+4i the
// nibble.
func (s *sketch) line(h uint64) (*[blockWords]uint64, uint64) {
	b, y := s.index(h)
	if b >= s.moved {
		return (*[blockWords]uint64)(s.old[b/2*blockWords:]), y
	}
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

// estimate returns the estimated frequency of h, 0 to 15.
func (s *sketch) estimate(h uint64) int {
	m := uint64(15)
	l, y := s.line(h)
	for i := range 4 {
		w, sh := slot(y, i)
		if c := (l[w&7] >> sh) & 15; c < m {
			m = c
		}
	}
	return int(m)
}

// increment counts one occurrence of h in each of its four counters that is
// not saturated. Conservative update (raising only the minimum counters)
// was measured and lost: on lirs-loop at 250 entries the cache's hit ratio
// fell from 24.3% to 15.5%, and the mean over the trace suite by 0.5 point.
func (s *sketch) increment(h uint64) {
	s.move(moveBlocks)
	added := false
	l, y := s.line(h)
	for i := range 4 {
		w, sh := slot(y, i)
		if (l[w&7]>>sh)&15 < 15 {
			l[w&7] += 1 << sh
			added = true
		}
	}
	if !added {
		return
	}
	s.added++
	if s.added >= s.resetAt {
		s.reset()
	}
}

// reset halves every counter.
func (s *sketch) reset() {
	var odd int
	a, b := s.parts()
	for _, part := range [2][]uint64{a, b} {
		for i, w := range part {
			odd += bits.OnesCount64(w & 0x1111111111111111)
			part[i] = (w >> 1) & 0x7777777777777777
		}
	}
	s.added = (s.added - uint64(odd)/4) / 2
}

// halveUp halves every counter, rounding up, so that a key seen at all
// keeps a count of at least one. The count of increments is left as is:
// the periodic reset stays on its schedule.
func (s *sketch) halveUp() {
	a, b := s.parts()
	for _, part := range [2][]uint64{a, b} {
		for i, w := range part {
			part[i] = (w>>1)&0x7777777777777777 + w&0x1111111111111111
		}
	}
}
