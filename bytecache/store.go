package bytecache

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync/atomic"
)

// This file holds the single-threaded core of a shard: a ring of byte chunks
// holding entries in the order they were written, and an open-addressing
// index from hash to ring offset. It knows nothing of locks; shard methods
// in cache.go call it with the shard's lock held.
//
// # Ring
//
// A shard's ring is ringSize bytes, split into chunks of 1<<chunkShift
// bytes (the last chunk may be shorter), allocated when the write
// position first reaches them. Entries are written one after another at the
// head; an entry may straddle chunks and the end of the ring. The bytes in
// [tail, head) are a sequence of entries, live or dead (overwritten, deleted
// or expired and removed from the index). To make room the tail advances
// over the oldest entry, removing it from the index if it is still live
// (an eviction, or an expiration if it had expired).
//
// head and tail are absolute byte positions (they only grow, also across
// Clear and LoadFrom), so that an iteration can resume where it stopped;
// headOff and tailOff are their offsets in the ring.
//
// # Entry layout
//
//	uvarint(keyLen<<1 | hasExpiry)  1-3 bytes (keys are shorter than 64 KiB)
//	uvarint(valueLen)               1-5 bytes
//	expiry, int64 little endian     8 bytes, only if hasExpiry (Unix ns)
//	key
//	value
//
// # Index
//
// table is a power-of-two array of uint64 slots with linear probing: 0 is an
// empty slot, otherwise the high 32 bits are the low 32 bits of the key's
// hash (the tag, whose low bits also choose the home slot) and the low 32
// bits are the entry's ring offset plus one. Slots hold no pointers, so the
// garbage collector never scans them. Deletion shifts the following slots
// back (no tombstones). The index holds exactly the live entries; several
// slots may share a tag (hash collisions), and lookups compare keys in full.

const (
	// maxHeaderLen is the longest entry header: 3 bytes of key length and
	// flag, 5 of value length, 8 of expiry.
	maxHeaderLen = 3 + 5 + 8

	// maxKeyLimit is the largest key length the header format allows.
	maxKeyLimit = 1<<16 - 1

	// maxRingSize bounds a shard's ring so that offsets plus one fit in 32
	// bits and entry sizes in an int on 32-bit platforms.
	maxRingSize = 1 << 30

	// minRingSize is the smallest ring a shard may have.
	minRingSize = 1 << 10

	// heapChunkShift sets the size of chunks on the Go heap: 64 KiB.
	heapChunkShift = 16

	// offHeapChunkShift sets the size of chunks mapped outside the Go
	// heap: 1 MiB, so that a large cache needs few mappings.
	offHeapChunkShift = 20

	// minTableSize is the number of index slots allocated first.
	minTableSize = 16

	noExpiry = math.MaxInt64
)

// header is a decoded entry header.
type header struct {
	keyLen int
	valLen int
	hdrLen int
	exp    int64 // Unix ns; valid only if hasExp
	hasExp bool
}

func (h *header) size() int { return h.hdrLen + h.keyLen + h.valLen }

// expired reports whether the entry has expired at now (Unix ns). An entry
// expires at its expiry instant: it is live while now < exp.
func (h *header) expired(now int64) bool { return h.hasExp && h.exp <= now }

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// headerLen is the length of the header of an entry with these lengths.
func headerLen(keyLen, valLen int, hasExp bool) int {
	n := uvarintLen(uint64(keyLen)<<1) + uvarintLen(uint64(valLen))
	if hasExp {
		n += 8
	}
	return n
}

// putHeader encodes a header into b, which has room for maxHeaderLen bytes,
// and returns its length.
func putHeader(b []byte, keyLen, valLen int, exp int64, hasExp bool) int {
	kf := uint64(keyLen) << 1
	if hasExp {
		kf |= 1
	}
	n := binary.PutUvarint(b, kf)
	n += binary.PutUvarint(b[n:], uint64(valLen))
	if hasExp {
		binary.LittleEndian.PutUint64(b[n:], uint64(exp))
		n += 8
	}
	return n
}

// decodeHeader decodes the header at the start of b. ok is false if b does
// not start with a well-formed header (only snapshots can hold those).
func decodeHeader(b []byte) (h header, ok bool) {
	var kf, vl uint64
	var n, m int
	if len(b) > 1 && b[0] < 0x80 && b[1] < 0x80 {
		kf, vl, n, m = uint64(b[0]), uint64(b[1]), 1, 1
	} else {
		kf, n = binary.Uvarint(b)
		if n <= 0 || kf>>1 > maxKeyLimit {
			return h, false
		}
		vl, m = binary.Uvarint(b[n:])
		if m <= 0 || vl > maxRingSize {
			return h, false
		}
	}
	h.keyLen = int(kf >> 1)
	h.valLen = int(vl)
	h.hdrLen = n + m
	if kf&1 != 0 {
		if len(b) < h.hdrLen+8 {
			return h, false
		}
		h.hasExp = true
		h.exp = int64(binary.LittleEndian.Uint64(b[h.hdrLen:]))
		h.hdrLen += 8
	}
	return h, true
}

// wstats are the counters a store updates under its shard's write lock.
type wstats struct {
	sets        uint64
	deletes     uint64
	evictions   uint64
	expirations uint64
}

// store is a shard's ring and index. The zero value is not usable; see
// newStore.
type store struct {
	chunks     [][]byte
	ringSize   uint32
	chunkShift uint32

	table []uint64
	count int // live entries = occupied slots

	head, tail       uint64 // absolute positions
	headOff, tailOff uint32 // their ring offsets

	liveBytes  int64 // bytes of live entries
	allocBytes int64 // bytes of allocated chunks
	minExp     int64 // at most the smallest expiry of any live entry; noExpiry when none has a TTL (or the smallest is noExpiry)
	ttlLive    int   // live entries with a TTL

	// offHeap: map chunks outside the Go heap; mapped[i] tells whether
	// chunks[i] was mapped (a failed mapping falls back to the heap).
	offHeap bool
	mapped  []bool

	hash hasher
	st   wstats
}

// mappedBytes counts the bytes of chunks mapped outside the heap, by all
// caches (tests check that they are released).
var mappedBytes atomic.Int64

func newStore(ringSize uint32, chunkShift uint32, offHeap bool, h hasher) store {
	n := (ringSize + 1<<chunkShift - 1) >> chunkShift
	s := store{
		chunks:     make([][]byte, n),
		ringSize:   ringSize,
		chunkShift: chunkShift,
		minExp:     noExpiry,
		hash:       h,
		offHeap:    offHeap,
	}
	if offHeap {
		s.mapped = make([]bool, n)
	}
	return s
}

// allocChunk allocates chunk ci.
func (s *store) allocChunk(ci uint32) {
	size := min(uint32(1)<<s.chunkShift, s.ringSize-ci<<s.chunkShift)
	if s.offHeap {
		if b, err := mapChunk(int(size)); err == nil {
			s.chunks[ci], s.mapped[ci] = b, true
			mappedBytes.Add(int64(size))
			s.allocBytes += int64(size)
			return
		}
	}
	s.chunks[ci] = make([]byte, size)
	s.allocBytes += int64(size)
}

// releaseChunks releases every chunk. Nothing may use them afterwards.
func (s *store) releaseChunks() {
	for i, c := range s.chunks {
		if c != nil && s.offHeap && s.mapped[i] {
			if unmapChunk(c) == nil {
				mappedBytes.Add(-int64(len(c)))
			}
			s.mapped[i] = false
		}
		s.chunks[i] = nil
	}
	s.allocBytes = 0
}

// reset drops every entry and releases the chunks and the index; positions
// keep growing.
func (s *store) reset() {
	s.releaseChunks()
	s.table = nil
	s.count = 0
	s.tail = s.head
	s.headOff, s.tailOff = 0, 0
	s.liveBytes = 0
	s.minExp = noExpiry
	s.ttlLive = 0
}

func (s *store) advance(off uint32, n int) uint32 {
	o := uint64(off) + uint64(n)
	for o >= uint64(s.ringSize) {
		o -= uint64(s.ringSize)
	}
	return uint32(o)
}

// at returns the chunk holding ring offset off and off's index in it. The
// chunk is nil if it was never written.
func (s *store) at(off uint32) ([]byte, int) {
	return s.chunks[off>>s.chunkShift], int(off & (1<<s.chunkShift - 1))
}

// copyOut copies up to len(p) ring bytes starting at off into p, stopping
// at a chunk never written; it returns how many it copied.
func (s *store) copyOut(p []byte, off uint32) int {
	n := 0
	for n < len(p) {
		c, i := s.at(off)
		if c == nil {
			break
		}
		k := copy(p[n:], c[i:])
		n += k
		off = s.advance(off, k)
	}
	return n
}

// appendAt appends the n ring bytes at off to dst.
func (s *store) appendAt(dst []byte, off uint32, n int) []byte {
	for n > 0 {
		c, i := s.at(off)
		k := min(n, len(c)-i)
		dst = append(dst, c[i:i+k]...)
		n -= k
		off = s.advance(off, k)
	}
	return dst
}

// equalAt reports whether the len(key) ring bytes at off equal key.
func (s *store) equalAt(off uint32, key []byte) bool {
	for len(key) > 0 {
		c, i := s.at(off)
		k := min(len(key), len(c)-i)
		if string(c[i:i+k]) != string(key[:k]) {
			return false
		}
		key = key[k:]
		off = s.advance(off, k)
	}
	return true
}

// writeAt copies p into the ring at off, allocating chunks as needed, and
// returns the offset after it.
func (s *store) writeAt(off uint32, p []byte) uint32 {
	for len(p) > 0 {
		ci := off >> s.chunkShift
		if s.chunks[ci] == nil {
			s.allocChunk(ci)
		}
		c, i := s.chunks[ci], int(off&(1<<s.chunkShift-1))
		k := copy(c[i:], p)
		p = p[k:]
		off = s.advance(off, k)
	}
	return off
}

// header decodes the header of the entry at off.
func (s *store) header(off uint32) header {
	c, i := s.at(off)
	if len(c)-i >= maxHeaderLen {
		h, _ := decodeHeader(c[i:])
		return h
	}
	var b [maxHeaderLen]byte
	n := s.copyOut(b[:], off)
	h, _ := decodeHeader(b[:n])
	return h
}

// keyTag returns the tag of the key of the entry at off with header h. A
// key that straddles chunks is hashed piece by piece (maphash.Hash gives
// the result of maphash.Bytes), so that no copy of it is kept.
func (s *store) keyTag(off uint32, h *header) uint32 {
	koff := s.advance(off, h.hdrLen)
	c, i := s.at(koff)
	if len(c)-i >= h.keyLen {
		return uint32(s.hash.sum(c[i : i+h.keyLen]))
	}
	var mh maphash.Hash
	mh.SetSeed(s.hash.seed)
	for n := h.keyLen; n > 0; {
		c, i := s.at(koff)
		k := min(n, len(c)-i)
		mh.Write(c[i : i+k])
		n -= k
		koff = s.advance(koff, k)
	}
	return uint32(mh.Sum64() & s.hash.mask)
}

func slotTag(e uint64) uint32 { return uint32(e >> 32) }
func slotOff(e uint64) uint32 { return uint32(e) - 1 }
func makeSlot(tag, off uint32) uint64 {
	return uint64(tag)<<32 | uint64(off+1)
}

// lookup finds key, whose hash has tag, in the index. It returns the slot,
// the entry's offset and header, and how many other keys with the same tag
// it compared on the way (collisions). slot is -1 if key is absent.
func (s *store) lookup(key []byte, tag uint32) (slot int, off uint32, h header, collisions int) {
	t := s.table
	if len(t) == 0 {
		return -1, 0, h, 0
	}
	mask := uint32(len(t) - 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		e := t[i]
		if e == 0 {
			return -1, 0, h, collisions
		}
		if slotTag(e) != tag {
			continue
		}
		off = slotOff(e)
		if s.matches(off, key, &h) {
			return int(i), off, h, collisions
		}
		collisions++
	}
}

// matches decodes the header of the entry at off into h and reports whether
// its key is key.
func (s *store) matches(off uint32, key []byte, h *header) bool {
	c, i := s.at(off)
	if rest := c[i:]; len(rest) >= maxHeaderLen {
		*h, _ = decodeHeader(rest)
		if h.keyLen != len(key) {
			return false
		}
		if end := h.hdrLen + h.keyLen; end <= len(rest) {
			return string(rest[h.hdrLen:end]) == string(key)
		}
	} else {
		*h = s.header(off)
		if h.keyLen != len(key) {
			return false
		}
	}
	return s.equalAt(s.advance(off, h.hdrLen), key)
}

// appendValue appends the value of the entry at off with header h to dst.
func (s *store) appendValue(dst []byte, off uint32, h *header) []byte {
	voff := s.advance(off, h.hdrLen+h.keyLen)
	c, i := s.at(voff)
	if len(c)-i >= h.valLen {
		return append(dst, c[i:i+h.valLen]...)
	}
	return s.appendAt(dst, voff, h.valLen)
}

// findOff returns the slot that points at ring offset off, or -1.
func (s *store) findOff(tag, off uint32) int {
	t := s.table
	if len(t) == 0 {
		return -1
	}
	mask := uint32(len(t) - 1)
	want := uint32(off + 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		e := t[i]
		if e == 0 {
			return -1
		}
		if uint32(e) == want {
			return int(i)
		}
	}
}

// removeSlot empties slot i, shifting back the slots after it that would
// otherwise become unreachable.
func (s *store) removeSlot(i int) {
	t := s.table
	mask := len(t) - 1
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		e := t[j]
		if e == 0 {
			break
		}
		home := int(slotTag(e)) & mask
		// The entry at j may move back to i unless its home lies in (i, j].
		if (j-home)&mask >= (j-i)&mask {
			t[i] = e
			i = j
		}
	}
	t[i] = 0
	s.count--
	if n := len(t); n > minTableSize && s.count*8 < n {
		// An eighth full: halve the table, to a quarter full, so that the
		// index shrinks with the live entries (after deletes, or large
		// entries evicting small ones) and a table that doubles or halves
		// has gained or lost a quarter of its slots' worth of entries
		// since it last did.
		s.resize(n / 2)
	}
}

// insertSlot adds slot value e, whose key is not in the index.
func (s *store) insertSlot(e uint64) {
	if (s.count+1)*4 > len(s.table)*3 {
		s.grow()
	}
	t := s.table
	mask := uint32(len(t) - 1)
	i := slotTag(e) & mask
	for t[i] != 0 {
		i = (i + 1) & mask
	}
	t[i] = e
	s.count++
}

// grow doubles the table (or makes the first one).
func (s *store) grow() { s.resize(max(minTableSize, 2*len(s.table))) }

// resize moves the index to a table of n slots, a power of two above the
// number of live entries.
func (s *store) resize(n int) {
	old := s.table
	t := make([]uint64, n)
	mask := uint32(n - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := slotTag(e) & mask
		for t[i] != 0 {
			i = (i + 1) & mask
		}
		t[i] = e
	}
	s.table = t
}

// lazyNow reads a clock at most once.
type lazyNow struct {
	fn func() int64
	t  int64
	ok bool
}

func (l *lazyNow) get() int64 {
	if !l.ok {
		l.t, l.ok = l.fn(), true
	}
	return l.t
}

// drop removes the live entry in slot, whose header is h.
func (s *store) drop(slot int, h *header) {
	s.removeSlot(slot)
	s.liveBytes -= int64(h.size())
	if h.hasExp {
		s.lostTTL()
	}
}

// lostTTL counts a live entry with a TTL gone (removed or replaced). When
// none is left, nothing can expire: Len need not read the clock nor sweep
// the shard.
func (s *store) lostTTL() {
	s.ttlLive--
	if s.ttlLive == 0 {
		s.minExp = noExpiry
	}
}

// reclaimTail advances the tail over the oldest entry, removing it from the
// index if it is live. replacing is the offset plus one of the entry that
// the Set in progress replaces (0 if none): removing that one is neither an
// eviction nor an expiration, and reclaimTail reports that it did.
func (s *store) reclaimTail(now *lazyNow, replacing uint32) (replaced bool) {
	if s.count == 0 {
		// Every entry in the ring is dead.
		s.tail, s.tailOff = s.head, s.headOff
		return false
	}
	off := s.tailOff
	h := s.header(off)
	if slot := s.findOff(s.keyTag(off, &h), off); slot >= 0 {
		s.drop(slot, &h)
		switch {
		case off+1 == replacing:
			replaced = true
		case h.hasExp && h.exp <= now.get():
			s.st.expirations++
		default:
			s.st.evictions++
		}
	}
	size := h.size()
	s.tail += uint64(size)
	s.tailOff = s.advance(off, size)
	return replaced
}

// set stores an entry for key, whose hash has tag, replacing any entry for
// key, and returns how many other keys it compared in full on the way. The
// entry, of size hdrLen+len(key)+len(value), fits in the ring.
func (s *store) set(key, value []byte, tag uint32, exp int64, hasExp bool, now *lazyNow) (collisions int) {
	var hb [maxHeaderLen]byte
	hl := putHeader(hb[:], len(key), len(value), exp, hasExp)
	size := hl + len(key) + len(value)
	slot, oldOff, old, coll := s.lookup(key, tag)
	if s.head+uint64(size)-s.tail > uint64(s.ringSize) {
		replacing := uint32(0)
		if slot >= 0 {
			replacing = oldOff + 1
		}
		for s.head+uint64(size)-s.tail > uint64(s.ringSize) {
			if s.reclaimTail(now, replacing) {
				replacing = 0
			}
		}
		// Removing entries may have moved the slots (or the old entry).
		slot = -1
		if replacing != 0 {
			slot = s.findOff(tag, oldOff)
		}
	}
	off := s.headOff
	o := s.writeAt(off, hb[:hl])
	o = s.writeAt(o, key)
	s.headOff = s.writeAt(o, value)
	s.head += uint64(size)
	s.st.sets++
	if hasExp {
		s.ttlLive++
		s.minExp = min(s.minExp, exp)
	}

	e := makeSlot(tag, off)
	if slot >= 0 {
		s.table[slot] = e
		s.liveBytes -= int64(old.size())
		if old.hasExp {
			s.lostTTL()
		}
	} else {
		s.insertSlot(e)
	}
	s.liveBytes += int64(size)
	return coll
}

// sweep removes the live entries that have expired at now, if any may have.
func (s *store) sweep(now int64) {
	if s.minExp > now {
		return
	}
	minExp := int64(noExpiry)
	off := s.tailOff
	for pos := s.tail; pos < s.head; {
		h := s.header(off)
		// Only live entries count: a dead copy (replaced or deleted)
		// left in the ring would make a later Len sweep for nothing.
		if h.hasExp {
			if slot := s.findOff(s.keyTag(off, &h), off); slot >= 0 {
				if h.exp > now {
					minExp = min(minExp, h.exp)
				} else {
					s.drop(slot, &h)
					s.st.expirations++
				}
			}
		}
		size := h.size()
		pos += uint64(size)
		off = s.advance(off, size)
	}
	s.minExp = minExp
	if s.count == 0 {
		// The entries left in the ring are dead.
		s.tail, s.tailOff = s.head, s.headOff
	}
}

// collect appends to buf, in ring order, the raw bytes of the live,
// unexpired entries starting at absolute position from (or the tail, if
// from is older), until buf holds at least limit bytes or the head (or
// end, if earlier) is reached. It returns the buffer, the number of
// entries appended and the position to continue from; done reports that
// the head or end was reached.
//
// collect only reads the store (a read lock suffices).
func (s *store) collect(buf []byte, from, end uint64, limit int, now int64) (_ []byte, n int, next uint64, done bool) {
	if from < s.tail || from > s.head {
		from = s.tail
	}
	off := s.advance(s.tailOff, int(from-s.tail))
	pos := from
	for pos < s.head && pos < end && len(buf) < limit {
		h := s.header(off)
		size := h.size()
		if !h.expired(now) && s.findOff(s.keyTag(off, &h), off) >= 0 {
			buf = s.appendAt(buf, off, size)
			n++
		}
		pos += uint64(size)
		off = s.advance(off, size)
	}
	return buf, n, pos, pos >= min(s.head, end)
}
