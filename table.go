package cachekit

import (
	"slices"
	"sync"
	"sync/atomic"
)

// The index is a fixed array of segments, each an open-addressing hash
// table with linear probing whose slots are atomic pointers to entries.
// Readers never lock: they load the segment's current table and probe it.
// Writers lock the segment, so a key lives in at most one slot of the
// current table at any time, and an insert or a replacement is a single
// atomic store that readers see whole or not at all.
//
// A removal leaves no tombstone: the entries after the emptied slot that
// could sit there are moved back one by one (backward-shift deletion), so
// the slots stay as full as the live entries make them and probes never
// wade through dead slots. Moving an entry back can hide it from a reader
// that has already probed past its new slot, so a segment counts such
// removals in seq (odd while one is under way), and a reader that found
// nothing accepts the answer only if seq did not change meanwhile; a
// reader that finds its key never needs to check, since the entry was in
// the table when the reader saw it. A removal that moves nothing (the next
// slot is empty: no probe sequence goes past the emptied slot) leaves seq
// alone.
//
// When the live entries pass 3/4 of the slots the writer builds a table
// with twice as many slots as live entries (1.5× the old one), and when
// they fall under 1/4 (removals, expiry) one as small, but not smaller
// than the first table (sized by Options.InitialCapacity); tables have any
// size, not only powers of two, so that the load stays between 1/2 and 3/4
// as a cache grows (a key's first slot is a multiply-shift of its hash).
// The old table is never written again once a new one is published, so a
// reader still probing it sees a consistent, if slightly older, state.

const (
	minTableSize = 8
	// A table is rebuilt when live entries pass growLoad of its slots or
	// fall under shrinkLoad of them, to 1/rebuildLoad slots per entry.
	growLoadNum, growLoadDen = 3, 4
	shrinkLoadDen            = 4
	rebuildLoadInv           = 2
)

type table[K comparable, V any] struct {
	slots []atomic.Pointer[entry[K, V]]
}

// newTable returns a table of at least size slots: the slice's whole
// allocation, as the allocator rounds it up.
func newTable[K comparable, V any](size int) *table[K, V] {
	s := slices.Grow([]atomic.Pointer[entry[K, V]](nil), size)
	return &table[K, V]{slots: s[:cap(s)]}
}

// home returns the first slot probed for hash h: the low 32 bits of h
// scaled to the table's size (the segment is chosen by the high bits).
func (t *table[K, V]) home(h uint64) int {
	return int(uint64(uint32(h)) * uint64(len(t.slots)) >> 32)
}

type segment[K comparable, V any] struct {
	mu   sync.Mutex
	tab  atomic.Pointer[table[K, V]]
	seq  atomic.Uint64 // removals that moved entries, ×2; odd during one
	live atomic.Int64  // entries in the table; written under mu
	// floor is the size of the first table (Options.InitialCapacity):
	// removals never shrink the table below it. Set before the segment is
	// shared.
	floor int
	_     [24]byte // keep neighbouring segments' locks apart
}

func (s *segment[K, V]) init(capacity int) {
	t := newTable[K, V](tableSize(capacity))
	s.floor = len(t.slots)
	s.tab.Store(t)
}

// tableSize returns the number of slots for n live entries: 1/rebuildLoad
// per entry, at least minTableSize.
func tableSize(n int) int {
	return max(minTableSize, rebuildLoadInv*n)
}

// get returns the entry for key, or nil. Lock-free.
func (s *segment[K, V]) get(key K, h uint64) *entry[K, V] {
	for {
		v := s.seq.Load()
		t := s.tab.Load()
		n := len(t.slots)
		for i := t.home(h); ; {
			e := t.slots[i].Load()
			if e == nil {
				break
			}
			if e.Hash == h && e.key == key {
				return e
			}
			if i++; i == n {
				i = 0
			}
		}
		if v&1 == 0 && s.seq.Load() == v {
			return nil
		}
	}
}

// holds reports whether e is in the segment's current table. Lock-free.
// Entries are never put back once removed, so once e has left the index
// holds reports false for good.
func (s *segment[K, V]) holds(e *entry[K, V]) bool {
	for {
		v := s.seq.Load()
		t := s.tab.Load()
		n := len(t.slots)
		for i := t.home(e.Hash); ; {
			x := t.slots[i].Load()
			if x == nil {
				break
			}
			if x == e {
				return true
			}
			if i++; i == n {
				i = 0
			}
		}
		if v&1 == 0 && s.seq.Load() == v {
			return false
		}
	}
}

// put stores e, replacing the entry with the same key if there is one,
// which it returns. The caller holds s.mu.
func (s *segment[K, V]) put(e *entry[K, V]) *entry[K, V] {
	t := s.tab.Load()
	n := len(t.slots)
	i := t.home(e.Hash)
	for {
		x := t.slots[i].Load()
		if x == nil {
			break
		}
		if x.Hash == e.Hash && x.key == e.key {
			t.slots[i].Store(e)
			return x
		}
		if i++; i == n {
			i = 0
		}
	}
	t.slots[i].Store(e)
	if live := s.live.Add(1); live*growLoadDen > int64(n)*growLoadNum {
		s.rebuild(int(live))
	}
	return nil
}

// remove takes the entry for key out of the table and returns it, or
// returns nil. If want is not nil, only that very entry is removed. The
// caller holds s.mu.
func (s *segment[K, V]) remove(key K, h uint64, want *entry[K, V]) *entry[K, V] {
	t := s.tab.Load()
	n := len(t.slots)
	for i := t.home(h); ; {
		x := t.slots[i].Load()
		if x == nil {
			return nil
		}
		if x.Hash == h && x.key == key {
			if want != nil && x != want {
				return nil
			}
			s.delete(t, i)
			live := s.live.Add(-1)
			if n > s.floor && live*shrinkLoadDen < int64(n) {
				s.rebuild(int(live))
			}
			return x
		}
		if i++; i == n {
			i = 0
		}
	}
}

// delete empties slot i of t, the current table, moving back the entries
// of the probe run after it that may sit there (Knuth's algorithm R for
// linear probing). The caller holds s.mu.
func (s *segment[K, V]) delete(t *table[K, V], i int) {
	n := len(t.slots)
	moved := false
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		x := t.slots[j].Load()
		if x == nil {
			break
		}
		// x stays if its home is cyclically in (i, j]: the empty slot i
		// is not on its probe sequence.
		if k := t.home(x.Hash); i <= j && i < k && k <= j || i > j && (i < k || k <= j) {
			continue
		}
		if !moved {
			moved = true
			s.seq.Add(1)
		}
		// x is in both slots until j is overwritten: a reader finds it in
		// either.
		t.slots[i].Store(x)
		i = j
	}
	t.slots[i].Store(nil)
	if moved {
		s.seq.Add(1)
	}
}

// rebuild publishes a new table sized for live entries, holding the
// current table's entries. The caller holds s.mu.
func (s *segment[K, V]) rebuild(live int) {
	old := s.tab.Load()
	t := newTable[K, V](max(tableSize(live), s.floor))
	n := len(t.slots)
	for i := range old.slots {
		e := old.slots[i].Load()
		if e == nil {
			continue
		}
		j := t.home(e.Hash)
		for t.slots[j].Load() != nil {
			if j++; j == n {
				j = 0
			}
		}
		t.slots[j].Store(e)
	}
	s.tab.Store(t)
}

// clear empties the segment, passing every live entry to fn after taking
// it out of the index. The caller holds s.mu.
func (s *segment[K, V]) clear(fn func(*entry[K, V])) {
	old := s.tab.Load()
	s.tab.Store(newTable[K, V](s.floor))
	s.live.Store(0)
	for i := range old.slots {
		if e := old.slots[i].Load(); e != nil {
			fn(e)
		}
	}
}

// snapshot appends the segment's live entries to dst. Lock-free on the
// table, but the caller holds s.mu so the snapshot is of one moment.
func (s *segment[K, V]) snapshot(dst []*entry[K, V]) []*entry[K, V] {
	t := s.tab.Load()
	for i := range t.slots {
		if e := t.slots[i].Load(); e != nil {
			dst = append(dst, e)
		}
	}
	return dst
}

// capacity returns the number of slots of the current table.
func (s *segment[K, V]) capacity() int { return len(s.tab.Load().slots) }
