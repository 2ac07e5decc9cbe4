package cachekit

import (
	"fmt"
	"sync"
	"time"
)

// Test hooks. They must be called before the cache is shared.

// settle runs maintenance until every buffered write is applied, as the
// background goroutine eventually would.
func (h *Cache[K, V]) settle() {
	h.c.maintain(true)
}

// setHasher replaces the key hash (to force collisions).
func (h *Cache[K, V]) setHasher(fn func(K) uint64) {
	h.c.hasher, h.c.keyKind, h.get.keyKind = fn, keyOther, keyOther
}

// setRandom replaces the jitter's random source.
func (h *Cache[K, V]) setRandom(fn func() float64) { h.c.random = fn }

// deadlineOf returns the deadline of key's entry in the cache's clock.
func (h *Cache[K, V]) deadlineOf(key K) (time.Duration, bool) {
	c := h.c
	hash := c.hash(key)
	e := c.segment(hash).get(key, hash)
	if e == nil {
		return 0, false
	}
	return time.Duration(e.deadline()), true
}

// reorderWrites runs fn with the maintenance lock held, so that the write
// records fn queues stay queued, and then applies them newest first, with
// an eviction pass after each, as maintenance would if concurrent writers
// had queued them in that order.
func (h *Cache[K, V]) reorderWrites(fn func()) {
	c := h.c
	c.mu.Lock()
	fn()
	var evs []event[K, V]
	for {
		ev, ok := c.writes.Pop()
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		c.applyWrite(evs[i])
		c.evict()
	}
	pend := c.pending
	c.pending = nil
	c.mu.Unlock()
	c.report(pend)
}

// indexSlots returns the total number of slots of the index's tables.
func (h *Cache[K, V]) indexSlots() int {
	n := 0
	for i := range h.c.segs {
		n += h.c.segs[i].capacity()
	}
	return n
}

// wheelLen returns the number of entries scheduled in the timer wheel.
func (h *Cache[K, V]) wheelLen() int {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return h.c.wheel.Len()
}

// checkInvariants settles the cache and checks its internal bookkeeping:
// segment counts match the tables, every indexed entry is tracked by the
// policy (when bounded), the policy's count and weight match the index, the
// bound holds, and the wheel holds exactly the tracked entries with a
// deadline. The cache must not be used concurrently.
func (h *Cache[K, V]) checkInvariants() error {
	c := h.c
	h.settle()
	c.mu.Lock()
	defer c.mu.Unlock()
	total, weight, timed := 0, uint64(0), 0
	for i := range c.segs {
		s := &c.segs[i]
		s.mu.Lock()
		t := s.tab.Load()
		n := t.size()
		live := 0
		var bad error
		// passed[g] counts the entries whose probe passes group g: its
		// overflow count, unless that count has stuck at overflowMax.
		passed := make([]uint64, len(t.groups))
		for gi := range t.groups {
			g := &t.groups[gi]
			ctrl := g.ctrl.Load()
			for j := range groupSlots {
				b, e := ctrl>>(8*j)&0xff, g.slots[j].Load()
				switch {
				case b == ctrlEmpty:
					if e != nil {
						bad = fmt.Errorf("segment %d group %d slot %d: control %#x but entry %v", i, gi, j, b, e.key)
					}
				case b&ctrlFull == 0:
					bad = fmt.Errorf("segment %d group %d slot %d: control %#x", i, gi, j, b)
				case e == nil:
					bad = fmt.Errorf("segment %d group %d slot %d: full without an entry", i, gi, j)
				case b != tag(c.hash(e.key)):
					bad = fmt.Errorf("segment %d: entry %v under control %#x, want %#x", i, e.key, b, tag(c.hash(e.key)))
				default:
					for k := t.home(c.hash(e.key)); k != gi; k = (k + 1) % len(t.groups) {
						passed[k]++
					}
				}
			}
		}
		for gi := range t.groups {
			// A probe for every key reaches it: the groups before its own
			// count it.
			if o := overflow(t.groups[gi].ctrl.Load()); o != passed[gi] && o != overflowMax {
				bad = fmt.Errorf("segment %d group %d: overflow count %d, but %d entries lie past it", i, gi, o, passed[gi])
			}
		}
		if bad != nil {
			s.mu.Unlock()
			return bad
		}
		for _, e := range s.snapshot(nil) {
			live++
			if got := c.segment(c.hash(e.key)); got != s {
				s.mu.Unlock()
				return fmt.Errorf("entry %v is in the wrong segment", e.key)
			}
			if c.bounded && !e.tracked() {
				s.mu.Unlock()
				return fmt.Errorf("indexed entry %v is not tracked by the policy", e.key)
			}
			if e.tracked() && e.deadline() != 0 {
				if !c.wheel.Scheduled(&e.timed().timer) {
					s.mu.Unlock()
					return fmt.Errorf("entry %v has a deadline but is not in the wheel", e.key)
				}
				timed++
			}
			weight += uint64(e.Weight)
		}
		if int64(live) != s.live.Load() {
			s.mu.Unlock()
			return fmt.Errorf("segment %d: live %d (counted %d)", i, s.live.Load(), live)
		}
		if live*growLoadDen > n*growLoadNum || n > s.floor && live*shrinkLoadDen < n {
			s.mu.Unlock()
			return fmt.Errorf("segment %d: %d entries in %d slots", i, live, n)
		}
		s.mu.Unlock()
		total += live
	}
	if len(c.waiting) != 0 {
		return fmt.Errorf("%d write records wait for a predecessor after settling", len(c.waiting))
	}
	if c.wheel.Len() != timed {
		return fmt.Errorf("wheel holds %d entries, index has %d tracked entries with a deadline", c.wheel.Len(), timed)
	}
	if c.bounded {
		if c.policy.Len() != total {
			return fmt.Errorf("policy tracks %d entries, index holds %d", c.policy.Len(), total)
		}
		if c.policy.Weight() != weight {
			return fmt.Errorf("policy weight %d, index weight %d", c.policy.Weight(), weight)
		}
		if weight > c.maxWeight {
			return fmt.Errorf("weight %d exceeds the bound %d", weight, c.maxWeight)
		}
	}
	return nil
}

// fakeClock is a manual clock for tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}
