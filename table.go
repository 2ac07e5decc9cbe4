package cachekit

import (
	"math"
	mathbits "math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cachekit/cachekit/internal/buffer"
)

// The index is a fixed array of segments, each an open-addressing hash
// table whose slots are atomic pointers to entries, in groups of seven: a
// group is one 64-byte cache line, a control word (a byte per slot, empty
// or full with 7 bits of the entry's hash, and a byte of overflow count)
// and the seven pointers. Readers never lock: they load the segment's
// current table, match a group's control word against the key's hash bits
// all at once, and dereference only the slots whose bits match, so a hit
// costs the group's line and the entry's, and probing past other keys costs
// no entry at all. Writers lock the segment, so a key lives in at most one
// slot of the current table at any time. A replacement is one atomic store
// of the slot's pointer; an insert stores the pointer, then the control
// word; a removal the control word, then the pointer (nil). A reader checks
// every entry it dereferences against the key, so a control byte it read
// before the slot changed can only cost it a dereference, never a wrong
// answer.
//
// An insert takes the first empty slot from the key's home group on, and
// adds one to the overflow count of every full group it passes; the removal
// of that key takes the one back. So a group's overflow count is the number
// of keys placed past it, and a probe goes from the key's home group to the
// next only while the group's count is not zero (as in Folly's F14). A
// removal simply empties its slot: there are no deleted markers, so churn
// never fills a table with them, and a miss in a table that is not crowded
// reads little more than one group. An insert raises the counts before it publishes its key
// and a removal lowers them after it has taken its key out, so a reader
// that stops at a group whose count is zero has not missed a key that was
// in the table all along. A count that reaches 255 stays there (removals no
// longer lower it): probes go on past that group, which costs time, never
// an answer; and a probe stops after one lap of the table. Nothing is ever
// moved.
//
// When live entries pass 7/8 of the slots, or the entries lie too far from
// their home groups (see crowded), the writer builds a table with twice as
// many slots as live entries (within the segment's limit: see grownSize),
// and when the live entries fall under 1/4 (removals, expiry) one as small,
// but not smaller than the first table (sized by Options.InitialCapacity);
// tables have any number of groups, not only powers of two, so that a
// growing cache's table is never much larger than it needs (a key's home
// group is a multiply-shift of its hash). Entries do not keep their hash,
// so a rebuild hashes every key again. The old table is never written again
// once a new one is published, so a reader still probing it sees a
// consistent, if slightly older, state.

const (
	minTableSize = 8
	// A table is rebuilt when its live entries pass growLoad of its slots
	// or fall under shrinkLoad, to 1/rebuildLoad slots per entry.
	growLoadNum, growLoadDen = 7, 8
	shrinkLoadDen            = 4
	rebuildLoadInv           = 2
)

const (
	groupSlots = 7
	ctrlEmpty  = 0x00 // holds no entry
	ctrlFull   = 0x80 // | 7 bits of the hash: holds an entry
	// The overflow count is the control word's top byte.
	overflowShift = 56
	overflowMax   = 0xff // sticky: never lowered again

	lsb   = 0x0101010101010101
	low7  = 0x7f7f7f7f7f7f7f7f
	slotH = 0x0080808080808080 // the high bit of each of the seven slot bytes
)

type group[K comparable, V any] struct {
	ctrl  atomic.Uint64 // byte i < 7: slot i's state; byte 7: overflow count
	slots [groupSlots]atomic.Pointer[entry[K, V]]
}

// A table's header is read by every lookup and written by nobody once
// published: it is padded to a cache line of its own (see hotLine).
type table[K comparable, V any] struct {
	groups []group[K, V]
	_      [hotLine - sliceHeader]byte
}

// hotLine is the size of a cache line. The small, read-mostly objects that
// every Get reads (the Cache handle, a table's header, the read buffer's
// header) are padded to exactly this size, so that the allocator puts
// each alone on an aligned line: unpadded, each shared its line with
// other objects of its size class, and a program writing such an object
// at every operation took the line away from every reader. Measured with
// b.RunParallel on two processors, two goroutines reading a pre-filled
// cache of 32,768 entries (Zipf keys, every Get a hit): testing.PB, which
// each goroutine writes at every iteration, is a 32-byte object, as the
// read buffer's header was, and 9 runs in 28 took 2.1 to 2.6 times as long
// per Get (14 to 18 ns instead of 6.5 to 8.5); with the read buffer's
// header padded, none in 10 (6.8 to 8.0 ns), and with all three, none in
// 12 (6.6 to 7.5 ns).
// TestHotHeadersFillALine checks the sizes and the alignment.
const hotLine = buffer.CacheLine

// sliceHeader is the size of a slice header.
const sliceHeader = unsafe.Sizeof([]byte(nil))

// newTable returns a table of at least size slots: as many groups as the
// allocation holds once the allocator has rounded it up.
func newTable[K comparable, V any](size int) *table[K, V] {
	g := slices.Grow([]group[K, V](nil), (size+groupSlots-1)/groupSlots)
	return &table[K, V]{groups: g[:cap(g)]}
}

func (t *table[K, V]) size() int { return len(t.groups) * groupSlots }

// home returns the first group probed for hash h: the low 32 bits of h
// scaled to the table's size (the segment is chosen by the high bits).
func (t *table[K, V]) home(h uint64) int {
	return int(uint64(uint32(h)) * uint64(len(t.groups)) >> 32)
}

// tag returns the control byte of a slot holding an entry of hash h: bits
// that neither the segment (the high bits) nor the home (the low 32) uses.
func tag(h uint64) uint64 { return ctrlFull | (h>>32)&0x7f }

// zeroBytes returns a word with the high bit set in each byte of x that is
// zero, and nowhere else.
func zeroBytes(x uint64) uint64 { return ^((x & low7) + low7 | x | low7) }

// matching returns the slots of control word c whose byte is b, as their
// bytes' high bits.
func matching(c, b uint64) uint64 { return zeroBytes(c^(b*lsb)) & slotH }

// empties returns the empty slots of control word c, likewise.
func empties(c uint64) uint64 { return zeroBytes(c) & slotH }

// slotOf returns the lowest slot of a set of high bits.
func slotOf(m uint64) int { return mathbits.TrailingZeros64(m) >> 3 }

// setCtrl sets slot j's control byte to b. Only the segment's writer, who
// holds its lock, changes control words.
func (g *group[K, V]) setCtrl(j int, b uint64) {
	sh := uint(j) * 8
	g.ctrl.Store(g.ctrl.Load()&^(0xff<<sh) | b<<sh)
}

// overflow returns the overflow count of control word c.
func overflow(c uint64) uint64 { return c >> overflowShift }

// addOverflow adds d (1 or -1) to g's overflow count, unless the count
// has reached overflowMax. Only the segment's writer calls it.
func (g *group[K, V]) addOverflow(d int) {
	c := g.ctrl.Load()
	if overflow(c) == overflowMax {
		return
	}
	g.ctrl.Store(c + uint64(d)<<overflowShift)
}

// A segment is the writers' side of one part of the index: lookups never
// read it. They load the segment's current table from the cache's array of
// table pointers (cache.tabs), where tab points: eight pointers to a cache
// line, so that a lookup's first step stays in the CPU's nearest cache
// however many segments there are (with a segment's own 128 bytes in its
// place, going from 16 to 64 segments cost hits 3%). The first of the
// segment's two lines is set up once, the second is written by every write.
type segment[K comparable, V any] struct {
	tab *atomic.Pointer[table[K, V]] // in cache.tabs, set before init (else init makes one)
	// floor is the size of the first table (Options.InitialCapacity):
	// removals never shrink the table below it. limit, if not 0, is the
	// size that holds the segment's share of a cache bounded by entry
	// count at the rebuild load: growing never overshoots it by much.
	// Both are set before the segment is shared.
	floor, limit int
	// hash is the cache's key hash, for rebuilds (entries do not keep
	// their hash). Set before the segment is shared.
	hash func(K) uint64
	_    [64 - 4*wordSize]byte

	mu   sync.Mutex
	live atomic.Int64 // entries in the table; written under mu
	// disp is the sum over the table's entries of the groups between
	// their home and their own (the sum of the overflow counts, but
	// exact); dispFloor is twice its value after the last rebuild, and
	// removed counts the removals since. See crowded. Guarded by mu.
	disp, dispFloor, removed int
	_                        [64 - 16 - 3*wordSize]byte
}

const wordSize = unsafe.Sizeof(uintptr(0))

// init sizes the segment's first table for capacity entries; share, if
// not 0, is the segment's expected share of the cache's entry bound; hash
// is the cache's key hash.
func (s *segment[K, V]) init(capacity, share int, hash func(K) uint64) {
	if s.tab == nil {
		s.tab = new(atomic.Pointer[table[K, V]])
	}
	s.hash = hash
	t := newTable[K, V](tableSize(capacity))
	s.floor = t.size()
	if share > 0 {
		// Keys spread over segments binomially: three standard deviations
		// above the mean, at the rebuild load. Not at the growth load: a
		// bounded cache under churn sits at its share, and churn crowds
		// a table at 7/8 load within a fraction of its size in removals
		// (crowded), so it would be rebuilt over and over. At half load
		// it settles with misses reading about 1.2 groups. Against the
		// earlier index (deleted markers, this limit at 7/8 load), a cache
		// of 100,000 entries under uniform churn holds 2.0 slots per entry
		// instead of 1.37 (about 6 bytes more per entry), its misses read
		// 1.2 groups instead of 3.3 to 4.2, and BenchmarkEvict (uniform)
		// took 24-35% less time per operation.
		s.limit = withSlack(share) * rebuildLoadInv
	}
	s.tab.Store(t)
}

// withSlack returns n, a segment's mean share of entries, plus three
// standard deviations of the binomial spread of keys over segments (and
// one): room for the fullest segment but rarely.
func withSlack(n int) int {
	return n + 3*int(math.Sqrt(float64(n))) + 1
}

// ceilDiv returns a/b rounded up, for a, b > 0, without overflowing for a
// near math.MaxInt.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// grownSize returns the size of the table that a segment outgrowing its
// table at live entries gets: twice as many slots as entries, but not
// past the segment's limit unless it must; past the limit (a segment with
// more than its share, or a cache briefly over its bound), by an eighth.
func (s *segment[K, V]) grownSize(live int) int {
	size := tableSize(live)
	if s.limit > 0 && size > s.limit {
		size = max(s.limit, (live+live/8+1)*growLoadDen/growLoadNum)
	}
	return size
}

// tableSize returns the number of slots for n live entries: 1/rebuildLoad
// per entry, at least minTableSize.
func tableSize(n int) int {
	return max(minTableSize, rebuildLoadInv*n)
}

// get returns the entry for key, or nil. Lock-free.
func (s *segment[K, V]) get(key K, h uint64) *entry[K, V] {
	return s.tab.Load().get(key, h)
}

// get returns the entry for key, whose hash is h, or nil. Lock-free.
//
// It probes the home group and leaves the groups past it to getPast.
// Cache.Get does the same, written out: get is too large for the compiler
// to inline, and a hit is a chain of dependent loads (the table, the group,
// the slot, the entry) that a call makes longer.
func (t *table[K, V]) get(key K, h uint64) *entry[K, V] {
	i := t.home(h)
	c := t.groups[i].ctrl.Load()
	if e := t.groups[i].lookup(key, c, tag(h)); e != nil || overflow(c) == 0 {
		return e
	}
	return t.getPast(key, h, i)
}

// getPast probes for key, whose hash is h, in the groups after home: get's
// probe past a home group whose overflow count is not zero.
func (t *table[K, V]) getPast(key K, h uint64, home int) *entry[K, V] {
	n, b := len(t.groups), tag(h)
	for i, left := home, n-1; left > 0; left-- {
		if i++; i == n {
			i = 0
		}
		c := t.groups[i].ctrl.Load()
		if e := t.groups[i].lookup(key, c, b); e != nil || overflow(c) == 0 {
			return e
		}
	}
	return nil
}

// lookup returns the entry for key among the slots of g whose control
// bytes, in g's control word c, are b; or nil.
func (g *group[K, V]) lookup(key K, c, b uint64) *entry[K, V] {
	for m := matching(c, b); m != 0; m &= m - 1 {
		if e := g.slots[slotOf(m)].Load(); e != nil && e.key == key {
			return e
		}
	}
	return nil
}

// find returns the group index and slot of key in t, or -1. The caller
// holds s.mu.
func (t *table[K, V]) find(key K, h uint64) (gi, j int) {
	n, b := len(t.groups), tag(h)
	for i, left := t.home(h), n; ; {
		g := &t.groups[i]
		c := g.ctrl.Load()
		for m := matching(c, b); m != 0; m &= m - 1 {
			j := slotOf(m)
			if e := g.slots[j].Load(); e.key == key {
				return i, j
			}
		}
		if left--; overflow(c) == 0 || left == 0 {
			return -1, 0
		}
		if i++; i == n {
			i = 0
		}
	}
}

// insert puts e, whose key hashes to h and which t does not hold, in the
// first empty slot of its probe sequence, first counting it in the
// overflow count of every group it passes, and returns how many groups it
// passed. t must have an empty slot. The caller holds s.mu (or owns t).
func (t *table[K, V]) insert(e *entry[K, V], h uint64) int {
	n := len(t.groups)
	for i, d := t.home(h), 0; ; d++ {
		g := &t.groups[i]
		if free := empties(g.ctrl.Load()); free != 0 {
			j := slotOf(free)
			g.slots[j].Store(e)
			g.setCtrl(j, tag(h))
			return d
		}
		g.addOverflow(1)
		if i++; i == n {
			i = 0
		}
	}
}

// put stores e, whose key hashes to h, replacing the entry with the same
// key if there is one, which it returns. The caller holds s.mu.
func (s *segment[K, V]) put(e *entry[K, V], h uint64) *entry[K, V] {
	t := s.tab.Load()
	if gi, j := t.find(e.key, h); gi >= 0 {
		g := &t.groups[gi]
		x := g.slots[j].Load()
		g.slots[j].Store(e)
		return x
	}
	s.disp += t.insert(e, h)
	live := s.live.Add(1)
	if live*growLoadDen > int64(t.size()*growLoadNum) || s.crowded(int(live)) {
		s.rebuild(s.grownSize(int(live)))
	}
	return nil
}

// crowded reports whether churn has driven the table's entries so far
// from their home groups that it should be rebuilt: after removals of an
// eighth of its entries since the last rebuild, past an eighth of a group
// per entry on average, or twice as far as right after that rebuild,
// whichever is more. An insert takes the first empty slot, a removal
// leaves the keys placed past it where they are, and a miss reads on to
// the first group that no entry lies past. In a simulation of these
// tables, a fresh one at 7/8 load has 0.44 groups per entry and a miss
// reads 5 groups; churned by replacing its keys at random, it settles at
// 1.75 and a miss reads over a hundred. At half load (where a bounded
// cache keeps its table: see init) a fresh table has 0.02 and churn
// settles at 0.05 (1.2 groups per miss), so it is not rebuilt; from about
// 60% load on, churn crowds a table and it is rebuilt at half load. A
// table that only grows is never crowded: it grows at 7/8 load. The floor
// keeps a table of colliding keys (a test's forced hash) from being
// rebuilt at every insert.
func (s *segment[K, V]) crowded(live int) bool {
	return s.removed > live/8 && s.disp > max(live/8, s.dispFloor)+groupSlots
}

// remove takes the entry for key out of the table and returns it, or
// returns nil. If want is not nil, only that very entry is removed. The
// caller holds s.mu.
func (s *segment[K, V]) remove(key K, h uint64, want *entry[K, V]) *entry[K, V] {
	t := s.tab.Load()
	gi, j := t.find(key, h)
	if gi < 0 {
		return nil
	}
	g := &t.groups[gi]
	x := g.slots[j].Load()
	if want != nil && x != want {
		return nil
	}
	g.setCtrl(j, ctrlEmpty)
	g.slots[j].Store(nil)
	// The key no longer lies past the groups before its own.
	for i := t.home(h); i != gi; {
		t.groups[i].addOverflow(-1)
		s.disp--
		if i++; i == len(t.groups) {
			i = 0
		}
	}
	s.removed++
	live := s.live.Add(-1)
	if t.size() > s.floor && live*shrinkLoadDen < int64(t.size()) {
		s.rebuild(tableSize(int(live)))
	}
	return x
}

// each calls fn for every entry of t. The caller holds s.mu.
func (t *table[K, V]) each(fn func(*entry[K, V])) {
	for i := range t.groups {
		g := &t.groups[i]
		for m := g.ctrl.Load() & slotH; m != 0; m &= m - 1 {
			fn(g.slots[slotOf(m)].Load())
		}
	}
}

// rebuild publishes a new table of at least size slots (and s.floor),
// holding the current table's live entries. The caller holds s.mu.
//
// Entries do not keep their hash, so a rebuild reads every key, and each
// read is usually a cache miss. It hashes the keys of a batch of entries
// before it inserts them, so that the processor has many of those misses
// underway at once: the inserts' atomic stores (locked instructions on
// amd64) wait for every load before them, and one entry at a time left
// one miss underway. BenchmarkRebuild (200,000 entries): 203-255 ns per
// entry one at a time, 97-116 by batches of 32 (64: 90-109).
func (s *segment[K, V]) rebuild(size int) {
	old := s.tab.Load()
	t := newTable[K, V](max(size, s.floor))
	var (
		batch   [rebuildBatch]*entry[K, V]
		hashes  [rebuildBatch]uint64
		n, disp int
	)
	flush := func() {
		for i, e := range batch[:n] {
			hashes[i] = s.hash(e.key)
		}
		for i, e := range batch[:n] {
			disp += t.insert(e, hashes[i])
		}
		n = 0
	}
	old.each(func(e *entry[K, V]) {
		batch[n] = e
		if n++; n == rebuildBatch {
			flush()
		}
	})
	flush()
	s.disp, s.dispFloor, s.removed = disp, 2*disp, 0
	s.tab.Store(t)
}

// rebuildBatch is how many entries a rebuild hashes before it inserts them.
const rebuildBatch = 32

// clear empties the segment, passing every live entry to fn after taking
// it out of the index. The caller holds s.mu.
func (s *segment[K, V]) clear(fn func(*entry[K, V])) {
	old := s.tab.Load()
	s.tab.Store(newTable[K, V](s.floor))
	s.live.Store(0)
	s.disp, s.dispFloor, s.removed = 0, 0, 0
	old.each(fn)
}

// snapshot appends the segment's live entries to dst. Lock-free on the
// table, but the caller holds s.mu so the snapshot is of one moment.
func (s *segment[K, V]) snapshot(dst []*entry[K, V]) []*entry[K, V] {
	s.tab.Load().each(func(e *entry[K, V]) { dst = append(dst, e) })
	return dst
}

// capacity returns the number of slots of the current table.
func (s *segment[K, V]) capacity() int { return s.tab.Load().size() }
