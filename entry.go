package cachekit

import (
	"sync/atomic"
	"unsafe"

	"github.com/cachekit/cachekit/internal/node"
	"github.com/cachekit/cachekit/internal/wheel"
)

// entry is one key and value. Key, weight and deadline never change
// once the entry is published in the index; the value changes in place only
// for word-sized values (value.go), otherwise a Set of an existing key
// publishes a new entry in its place.
//
// An entry with a TTL is the first field of a timedEntry, which adds its
// deadline and its timer wheel links; Node.Tag says which of the two an
// entry is, so entries without a TTL do not pay for them. The embedded
// node's links and Mark belong to the maintenance lock (cache.mu).
//
// A 48-byte entry puts the words a Get reads (Tag, key, value) across two
// cache lines in one entry of four. Moving key and value to the front and
// skipping the Tag until the cache has seen a TTL, so that they never
// straddle a line, did not help: BenchmarkGetPut 100/0 with 2 goroutines
// took 9.3-9.6 ns per operation against 9.0-9.1 (3 runs each).
type entry[K comparable, V any] struct {
	node.Node // first field: toEntry depends on it
	key       K
	// The value starts on an 8-byte boundary, on every architecture, and
	// is the last field: a value of at most 8 bytes has a whole aligned
	// word to itself, which value.go updates atomically.
	_     [0]atomic.Uint64
	value V // see value.go for how it is read and written
}

// timedEntry is an entry with a deadline.
type timedEntry[K comparable, V any] struct {
	entry[K, V] // first field: an entry's address is its timedEntry's
	timer       wheel.Timer
}

// Node.Tag bits (set before publication, never changed).
const (
	tagTimed = 1 << iota // the entry is the first field of a timedEntry
)

// Node.Mark bits (guarded by cache.mu).
const (
	markTracked = 1 << iota // known to the policy and the wheel
	markApplied             // a bounded cache has applied its write record
	markGone                // its removal from the index was applied before it was tracked
)

// newEntry returns an unpublished entry for key with the given deadline
// (0: none): a timedEntry's entry if there is a deadline.
func newEntry[K comparable, V any](key K, deadline int64) *entry[K, V] {
	if deadline == 0 {
		return &entry[K, V]{key: key}
	}
	t := &timedEntry[K, V]{entry: entry[K, V]{key: key}}
	t.Tag = tagTimed
	t.timer.Deadline = deadline
	return &t.entry
}

// toEntry returns the entry that embeds n. Every *node.Node that the cache
// hands to its policy is the first field of an entry[K, V], so the
// conversion is to the allocation's own type.
func toEntry[K comparable, V any](n *node.Node) *entry[K, V] {
	return (*entry[K, V])(unsafe.Pointer(n))
}

// timerEntry returns the entry whose timedEntry holds t. Every timer that
// the cache schedules is the timer field of a timedEntry[K, V].
func timerEntry[K comparable, V any](t *wheel.Timer) *entry[K, V] {
	var x timedEntry[K, V]
	return (*entry[K, V])(unsafe.Add(unsafe.Pointer(t), -int(unsafe.Offsetof(x.timer))))
}

// timed returns e's timedEntry, or nil if e has no deadline.
func (e *entry[K, V]) timed() *timedEntry[K, V] {
	if e.Tag&tagTimed == 0 {
		return nil
	}
	return (*timedEntry[K, V])(unsafe.Pointer(e))
}

// deadline returns e's expiry time in the cache's clock, or 0 if it has
// none. Lock-free: a deadline never changes after publication.
func (e *entry[K, V]) deadline() int64 {
	if e.Tag&tagTimed == 0 {
		return 0
	}
	return (*timedEntry[K, V])(unsafe.Pointer(e)).timer.Deadline
}

// expired reports whether e has expired at now.
func (e *entry[K, V]) expired(now int64) bool {
	d := e.deadline()
	return d != 0 && d <= now
}

func (e *entry[K, V]) tracked() bool { return e.Mark&markTracked != 0 }
func (e *entry[K, V]) applied() bool { return e.Mark&markApplied != 0 }
func (e *entry[K, V]) gone() bool    { return e.Mark&markGone != 0 }

func (e *entry[K, V]) setTracked(b bool) {
	if b {
		e.Mark |= markTracked
	} else {
		e.Mark &^= markTracked
	}
}

// expiredAt reports whether e has expired at c's current time; it reads
// the clock only for an entry with a deadline. Lock-free.
func (e *entry[K, V]) expiredAt(c *cache[K, V]) bool {
	if e.Tag&tagTimed == 0 {
		return false
	}
	return (*timedEntry[K, V])(unsafe.Pointer(e)).timer.Deadline <= c.now()
}
