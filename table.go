package cachekit

import (
	"sync"
	"sync/atomic"
)

// The index is a fixed array of segments, each an open-addressing hash
// table with linear probing whose slots are atomic pointers to immutable
// entries. Readers never lock: they load the segment's current table and
// probe it. Writers lock the segment, so a key lives in at most one slot of
// the current table at any time, and a write is a single atomic store
// (insert, replace) that readers see whole or not at all. A removed entry
// leaves a tombstone, so a probe sequence is never cut short under a
// reader; a nil slot never becomes nil again once used, which is what
// makes "stop at nil" safe. When live entries plus tombstones pass 3/4 of
// the slots, the writer builds a new table sized for the live entries and
// publishes it; the old table is never written again, so a reader still
// probing it sees a consistent, if slightly older, state.

type table[K comparable, V any] struct {
	slots []atomic.Pointer[entry[K, V]]
	mask  uint64
}

func newTable[K comparable, V any](size int) *table[K, V] {
	return &table[K, V]{slots: make([]atomic.Pointer[entry[K, V]], size), mask: uint64(size - 1)}
}

type segment[K comparable, V any] struct {
	mu   sync.Mutex
	tab  atomic.Pointer[table[K, V]]
	live atomic.Int64 // entries in the table; written under mu
	used int          // live entries plus tombstones; guarded by mu
	_    [40]byte     // keep neighbouring segments' locks apart
}

func (s *segment[K, V]) init(capacity int) {
	s.tab.Store(newTable[K, V](tableSize(capacity)))
}

// tableSize returns the number of slots for n live entries: a power of two
// at least twice n, at least 8.
func tableSize(n int) int {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	return size
}

// get returns the entry for key, or nil. Lock-free.
func (s *segment[K, V]) get(key K, h uint64, tomb *entry[K, V]) *entry[K, V] {
	t := s.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.Hash == h && e.key == key && e != tomb {
			return e
		}
	}
}

// put stores e, replacing the entry with the same key if there is one,
// which it returns. The caller holds s.mu.
func (s *segment[K, V]) put(e *entry[K, V], tomb *entry[K, V]) *entry[K, V] {
	t := s.tab.Load()
	free := -1
	for i := e.Hash & t.mask; ; i = (i + 1) & t.mask {
		x := t.slots[i].Load()
		if x == nil {
			if free < 0 {
				free = int(i)
				s.used++
			}
			break
		}
		if x == tomb {
			if free < 0 {
				free = int(i)
			}
			continue
		}
		if x.Hash == e.Hash && x.key == e.key {
			t.slots[i].Store(e)
			return x
		}
	}
	t.slots[free].Store(e)
	s.live.Add(1)
	if s.used*4 > len(t.slots)*3 {
		s.rebuild(tomb)
	}
	return nil
}

// remove replaces the entry for key with a tombstone and returns it, or
// returns nil. If want is not nil, only that very entry is removed. The
// caller holds s.mu.
func (s *segment[K, V]) remove(key K, h uint64, want, tomb *entry[K, V]) *entry[K, V] {
	t := s.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		x := t.slots[i].Load()
		if x == nil {
			return nil
		}
		if x != tomb && x.Hash == h && x.key == key {
			if want != nil && x != want {
				return nil
			}
			t.slots[i].Store(tomb)
			s.live.Add(-1)
			return x
		}
	}
}

// holds reports whether e is in the segment's current table. Lock-free.
// Entries are never put back once removed, so once e has left the index
// holds reports false for good.
func (s *segment[K, V]) holds(e *entry[K, V]) bool {
	t := s.tab.Load()
	for i := e.Hash & t.mask; ; i = (i + 1) & t.mask {
		x := t.slots[i].Load()
		if x == nil {
			return false
		}
		if x == e {
			return true
		}
	}
}

// rebuild publishes a new table holding only the live entries. The caller
// holds s.mu.
func (s *segment[K, V]) rebuild(tomb *entry[K, V]) {
	old := s.tab.Load()
	t := newTable[K, V](tableSize(int(s.live.Load()) + 1))
	for i := range old.slots {
		e := old.slots[i].Load()
		if e == nil || e == tomb {
			continue
		}
		j := e.Hash & t.mask
		for t.slots[j].Load() != nil {
			j = (j + 1) & t.mask
		}
		t.slots[j].Store(e)
	}
	s.used = int(s.live.Load())
	s.tab.Store(t)
}

// clear empties the segment, passing every live entry to fn after taking
// it out of the index. The caller holds s.mu.
func (s *segment[K, V]) clear(tomb *entry[K, V], fn func(*entry[K, V])) {
	old := s.tab.Load()
	s.tab.Store(newTable[K, V](8))
	s.used = 0
	s.live.Store(0)
	for i := range old.slots {
		e := old.slots[i].Load()
		if e == nil || e == tomb {
			continue
		}
		fn(e)
	}
}

// snapshot appends the segment's live entries to dst. Lock-free on the
// table, but the caller holds s.mu so the snapshot is of one moment.
func (s *segment[K, V]) snapshot(dst []*entry[K, V], tomb *entry[K, V]) []*entry[K, V] {
	t := s.tab.Load()
	for i := range t.slots {
		if e := t.slots[i].Load(); e != nil && e != tomb {
			dst = append(dst, e)
		}
	}
	return dst
}

// capacity returns the number of slots of the current table.
func (s *segment[K, V]) capacity() int { return len(s.tab.Load().slots) }
