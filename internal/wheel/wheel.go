// Package wheel implements a hierarchical timing wheel that a cache uses to
// reclaim expired entries with bounded work per maintenance run.
//
// # Design
//
// Times are int64 nanoseconds in the cache's clock. The wheel maps them to
// uint64 keys with an order-preserving bias (the sign bit is flipped), so any
// int64, negative ones and math.MaxInt64 included, is a valid time, and any
// but 0 (which marks a timer without one) a valid deadline.
//
// The key space is cut into 6-bit digits, and level L of the wheel holds 64
// buckets for digit L: a bucket of level L spans 2^(6L) ns. Level 5 spans
// 2^30 ns (~1.07 s), level 6 2^36 ns (~1.14 min), level 7 2^42 ns (~1.22 h),
// level 8 2^48 ns (~3.3 d), level 9 2^54 ns (~208 d) and the top level 10
// (only 16 of its buckets can be used) 2^60 ns (~36.6 years); levels 0 to 4
// (1 ns to ~16.8 ms) make expiry exact to the nanosecond without ever scanning
// a bucket whose time has not come.
//
// A scheduled timer with deadline d later than the wheel's time t sits at the
// level of the highest digit in which d and t differ, in the bucket numbered
// by d's digit there. So every timer of a level shares all higher digits with
// t and has a larger digit at its own level, and the next time at which
// anything can happen is the start of the lowest occupied bucket of the
// lowest occupied level. Advance jumps from one such bucket start to the next:
// the bucket's timers that are due are expired, the others are cascaded to a
// lower level, which happens at most once per level over a timer's life. A
// 64-bit occupancy mask per level finds the next bucket in O(1), so an Advance
// costs O(levels) plus O(1) per timer it visits, never a scan of all timers.
//
// Timers scheduled with a deadline at or before the wheel's time wait in an
// overdue list and are expired by the next Advance.
//
// Buckets are circular doubly linked lists threaded through the timers' links
// with a sentinel timer per list, so a scheduled timer always has non-nil
// links and an unscheduled one has nil links, and Deschedule is O(1).
//
// Nothing in this package is safe for concurrent use.
package wheel

import "math/bits"

const (
	// digitBits is the number of key bits that one level resolves.
	digitBits = 6
	// bucketsPerLevel is the number of buckets of each level.
	bucketsPerLevel = 1 << digitBits
	// digitMask extracts one digit from a shifted key.
	digitMask = bucketsPerLevel - 1
	// numLevels is the number of levels needed to cover 64-bit keys.
	numLevels = (64 + digitBits - 1) / digitBits
	// noBucket is the Deadline of sentinels of lists that have no occupancy
	// bit (the pending and overdue lists). Bucket sentinels store
	// level<<digitBits | index there instead.
	noBucket = -1
	// bias maps int64 times to uint64 keys preserving order.
	bias = uint64(1) << 63
)

// Timer is the wheel's per-entry record: an owner embeds it in whatever
// it schedules (the cache, in its entries with a TTL) and finds its
// object back from the *Timer that Advance passes to expire. Its links
// belong to the wheel; Deadline to the owner, who sets it before Schedule
// and does not change it while the timer is scheduled.
type Timer struct {
	prev, next *Timer
	// Deadline is the expiry time, nanoseconds in the owner's clock. In the
	// wheel's own sentinels it tags the list (see noBucket).
	Deadline int64
}

// Wheel is a hierarchical timing wheel of *Timer ordered by their
// Deadline. Create one with New; the zero value is not usable, and a Wheel
// must not be copied.
//
// A Wheel is not safe for concurrent use: the caller must serialize all calls
// (in a cache, by holding its maintenance lock).
type Wheel struct {
	// time is the key of the wheel's current time: every timer with a
	// deadline at or before it has been expired or sits in pending or
	// overdue.
	time uint64
	// len is the number of scheduled timers.
	len int
	// occupied has bit i of word L set iff bucket i of level L is non-empty.
	occupied [numLevels]uint64
	// pending holds the timers of the bucket that Advance last opened and has
	// not finished visiting (its start is time).
	pending Timer
	// overdue holds timers scheduled with a deadline at or before time.
	overdue Timer
	// visited counts the timers that Advance has visited (expired or
	// cascaded) over the wheel's life; only tests read it.
	visited uint64
	// buckets are the sentinels of the bucket lists, by level and index. A
	// level's array is allocated when a timer is first placed in it: a
	// cache's deadlines use a few levels, and an empty wheel stays small.
	buckets [numLevels]*[bucketsPerLevel]Timer
}

// New returns an empty wheel whose current time is now.
func New(now int64) *Wheel {
	w := &Wheel{time: key(now)}
	initList(&w.pending, noBucket)
	initList(&w.overdue, noBucket)
	return w
}

// level returns the buckets of level l, allocating them on first use.
func (w *Wheel) level(l uint) *[bucketsPerLevel]Timer {
	b := w.buckets[l]
	if b == nil {
		b = new([bucketsPerLevel]Timer)
		for i := range b {
			initList(&b[i], int64(l)<<digitBits|int64(i))
		}
		w.buckets[l] = b
	}
	return b
}

// Len returns the number of scheduled timers.
func (w *Wheel) Len() int { return w.len }

// Scheduled reports whether n is scheduled (on w, if n is used with w only).
func (w *Wheel) Scheduled(n *Timer) bool { return n.next != nil }

// Schedule adds n to the wheel, to be expired by the first Advance whose now
// is at or after n.Deadline. A deadline at or before the wheel's current time
// is allowed: the timer expires on the next Advance that does not go back
// in time (see Advance).
//
// n.Deadline must not be 0 and must not change while n is scheduled, and n
// must not be scheduled already; Schedule panics if either check fails.
// Schedule allocates only when it is the first to use one of the wheel's
// levels (at most once per level over the wheel's life).
func (w *Wheel) Schedule(n *Timer) {
	if n.Deadline == 0 {
		panic("wheel: Schedule of a timer without a deadline")
	}
	if n.next != nil {
		panic("wheel: Schedule of a timer that is already scheduled")
	}
	w.len++
	w.place(n)
}

// Deschedule removes n from the wheel. It is a no-op if n is not scheduled.
// A scheduled n must be scheduled on w, not on another wheel.
func (w *Wheel) Deschedule(n *Timer) {
	prev, next := n.prev, n.next
	if next == nil {
		return
	}
	unlink(n)
	w.len--
	if prev == next && prev.Deadline != noBucket {
		// Only the sentinel is left: the bucket is now empty.
		w.occupied[prev.Deadline>>digitBits] &^= 1 << (prev.Deadline & digitMask)
	}
}

// Advance moves the wheel's current time to now and calls expire for every
// scheduled timer whose Deadline is at or before now, after unlinking it: when
// expire runs, the timer is no longer scheduled, and expire may Schedule or
// Deschedule any timer (itself included) but must not call Advance. Timers
// that expire schedules with a deadline at or before now are expired by the
// same Advance. Timers with a later deadline are never passed to expire. A nil
// expire drops expired timers silently.
//
// Advance visits a timer when it expires it or when it cascades it from a
// coarse bucket to a finer one. If budget > 0, Advance visits at most budget
// timers; when the budget runs out before the wheel has reached now, it
// returns false and the wheel's current time stays at the point reached, so a
// later call with the same or a later now continues without losing or
// expiring twice any timer. budget <= 0 means no limit. Advance returns true
// once the wheel's time is now and no timer due at now is left.
//
// If now is earlier than the wheel's current time, Advance does nothing and
// returns true, even for timers whose deadline is at or before that now
// (scheduled after the wheel passed their deadline): the next Advance at or
// after the wheel's time expires them.
func (w *Wheel) Advance(now int64, budget int, expire func(*Timer)) (done bool) {
	target := key(now)
	if target < w.time {
		return true
	}
	visits := 0
	for {
		// Visit the timers of the opened bucket and the overdue ones. The
		// lists are re-read each time because expire may change them.
		for {
			n := w.pending.next
			if n == &w.pending {
				if n = w.overdue.next; n == &w.overdue {
					break
				}
			}
			if budget > 0 && visits >= budget {
				return false
			}
			visits++
			w.visited++
			unlink(n)
			if key(n.Deadline) <= target {
				w.len--
				if expire != nil {
					expire(n)
				}
			} else {
				// Not due: n.Deadline > target >= time, so this puts n
				// in a bucket of a lower level than the one it came from.
				w.place(n)
			}
		}

		// Find the earliest bucket start: the lowest occupied bucket of
		// the lowest occupied level.
		level := -1
		for l, m := range w.occupied {
			if m != 0 {
				level = l
				break
			}
		}
		if level < 0 {
			w.time = target
			return true
		}
		index := uint(bits.TrailingZeros64(w.occupied[level]))
		shift := uint(level) * digitBits
		// Keep the digits above level (a shift of 64 or more gives 0, so
		// for the top level the mask is all ones), replace the digit at
		// level by index, and clear the digits below.
		start := w.time&^(uint64(1)<<(shift+digitBits)-1) | uint64(index)<<shift
		if start > target {
			w.time = target
			return true
		}
		if budget > 0 && visits >= budget {
			return false
		}
		// Open the bucket: move its timers to pending and advance to its
		// start. No timer can be placed in it again, since its digit now
		// equals the time's.
		w.time = start
		w.occupied[level] &^= 1 << index
		spliceAll(&w.buckets[level][index], &w.pending) // occupied, so allocated
	}
}

// place links n, which is counted in len but not linked, into the overdue
// list or the bucket its deadline selects relative to the wheel's time.
func (w *Wheel) place(n *Timer) {
	d := key(n.Deadline)
	if d <= w.time {
		pushBack(&w.overdue, n)
		return
	}
	level := uint(63-bits.LeadingZeros64(d^w.time)) / digitBits
	index := d >> (level * digitBits) & digitMask
	pushBack(&w.level(level)[index], n)
	w.occupied[level] |= 1 << index
}

// key maps a time to a key, preserving order.
func key(t int64) uint64 { return uint64(t) ^ bias }

// initList makes s the sentinel of an empty list, tagged with tag.
func initList(s *Timer, tag int64) {
	s.prev, s.next = s, s
	s.Deadline = tag
}

// pushBack links n, which must not be linked, before sentinel s.
func pushBack(s, n *Timer) {
	last := s.prev
	n.prev, n.next = last, s
	last.next = n
	s.prev = n
}

// unlink removes the linked timer n from its list and clears its links.
func unlink(n *Timer) {
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
}

// spliceAll moves every timer of the list with sentinel from to the list
// with sentinel to, which must be empty, in O(1).
func spliceAll(from, to *Timer) {
	first, last := from.next, from.prev
	if first == from {
		return
	}
	to.prev, to.next = last, first
	first.prev = to
	last.next = to
	from.prev, from.next = from, from
}

// Rewind moves the wheel's current time back to now, if now is earlier,
// placing every scheduled timer again relative to it, so that the timers
// due at now (scheduled after the wheel had passed their deadline) are
// expired by the next Advance(now) rather than once time has caught up
// with the wheel's. It costs O(Len) when it moves the time, nothing
// otherwise.
func (w *Wheel) Rewind(now int64) {
	target := key(now)
	if target >= w.time {
		return
	}
	var all Timer
	initList(&all, noBucket)
	spliceAll(&w.pending, &all)
	moveAll := func(from *Timer) {
		for n := from.next; n != from; n = from.next {
			unlink(n)
			pushBack(&all, n)
		}
	}
	moveAll(&w.overdue)
	for l := range w.occupied {
		for m := w.occupied[l]; m != 0; m &= m - 1 {
			moveAll(&w.buckets[l][bits.TrailingZeros64(m)])
		}
		w.occupied[l] = 0
	}
	w.time = target
	for n := all.next; n != &all; n = all.next {
		unlink(n)
		w.place(n)
	}
}
