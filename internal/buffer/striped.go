// Package buffer holds the two queues between the cache's lock-free hot
// paths and its single-threaded policy: a lossy striped buffer for reads
// and a bounded queue for writes.
package buffer

import (
	"sync/atomic"
	"unsafe"
)

// stripeSize is the number of slots in one stripe (a power of two).
//
// A read that finds its stripe full while a maintenance pass is underway
// is dropped, and those drops were what a concurrent replay lost in hit
// ratio: a Zipf stream (bench/cmd/visibility's, cache of 100,000)
// replayed by 8 goroutines hit 81.26–81.36% when no read was ever dropped
// (a blocking pass instead, a prototype), as with 1 goroutine (81.3%).
// Over 12 runs each, stripes of 16 hit 79.4–81.0% (median 79.7), stripes
// of 64 (the cache taking half as many stripes, so that its buffer grows
// by a fifth) 80.0–81.2% (median 81.0). The evicting Zipf benchmark's
// Gets hit 0.2 to 1.4 points more, its times within the host's noise; the
// single-goroutine replays of the trace suite were unchanged (mean 49.86%
// → 49.92%, 3 runs each).
const stripeSize = 64

// CacheLine is the size of a CPU cache line: the padding that keeps hot
// words apart, and the size of the read-mostly headers that must sit alone
// on a line.
const CacheLine = 64

// stripe is a small ring: many producers claim slots with a CAS on tail,
// one consumer (holding the owner's lock) advances head.
type stripe[T any] struct {
	head  atomic.Uint64
	_     [CacheLine - 8]byte
	tail  atomic.Uint64 // 64 bits: Added sums it, so it must not wrap
	count atomic.Uint64 // a free counter that rides on the producers' line
	last  atomic.Uint64 // who counted last, sampled (see Sample)
	_     [CacheLine - 24]byte
	slots [stripeSize]atomic.Pointer[T]
}

// Result tells what happened to an offered element.
type Result int

const (
	// Added means the element was queued.
	Added Result = iota
	// Full means the stripe was full and the element was dropped; the
	// owner should drain the buffer.
	Full
	// Contended means another producer won the slot and the element was
	// dropped; no drain is needed for that.
	Contended
)

// Striped is a lossy multi-producer, single-consumer buffer of pointers,
// spread over stripes to keep producers off each other's cache lines.
// Producers may call Add and Count concurrently; Drain must be called by
// one goroutine at a time (the owner serialises it with a lock).
// Elements may be dropped when a stripe is full or contended: it is meant
// for access records, where losing a few is harmless.
//
// Every Add and Inc reads the header (the stripes and the mask), so it is
// padded to a whole cache line: the allocator puts a 64-byte object alone
// on a 64-byte-aligned line, where a 32-byte header shared its line with
// whatever 32-byte object was allocated next to it, and every write to
// that object took the line from every reader (hotLine, in the cache's
// table.go, says what that cost).
type Striped[T any] struct {
	stripes []stripe[T]
	mask    uint64
	_       [CacheLine - sliceHeader - 8]byte
}

// sliceHeader is the size of a slice header.
const sliceHeader = unsafe.Sizeof([]byte(nil))

// NewStriped returns a buffer with n stripes, rounded up to a power of two.
func NewStriped[T any](n int) *Striped[T] {
	size := 1
	for size < n {
		size <<= 1
	}
	return &Striped[T]{stripes: make([]stripe[T], size), mask: uint64(size - 1)}
}

// Add offers p, which must not be nil (a nil slot is one taken but not yet
// written: drain would stop there for good), to the stripe chosen by
// probe.
func (b *Striped[T]) Add(p *T, probe uint64) Result {
	s := &b.stripes[probe&b.mask]
	t := s.tail.Load()
	// head is read after tail: other producers and a drain may have moved
	// it past t since, and t-h would wrap round to "full". The stripe was
	// not full then, and the CAS below fails (tail moved): Contended.
	if h := s.head.Load(); h <= t && t-h >= stripeSize {
		return Full
	}
	if !s.tail.CompareAndSwap(t, t+1) {
		return Contended
	}
	s.slots[t&(stripeSize-1)].Store(p)
	return Added
}

// Inc adds one to the counter of the stripe chosen by probe and returns
// the counter's new value: when it is a multiple of SampleEvery, the caller
// should call Sample.
func (b *Striped[T]) Inc(probe uint64) uint64 {
	return b.stripes[probe&b.mask].count.Add(1)
}

// Sample is the package's Sample for the stripe chosen by probe.
func (b *Striped[T]) Sample(probe, id uint64) (shared bool) {
	return Sample(&b.stripes[probe&b.mask].last, id)
}

// SampleEvery is how often the counters of a striped counter sample who
// is counting (see Sample).
const SampleEvery = 64

// Sample tells whether goroutines seem to share a stripe of a striped
// counter. Each time the stripe's counter reaches a multiple of
// SampleEvery, the goroutine that took it there calls Sample with its id
// (any nonzero number that tells running goroutines apart) and last, a word
// on the stripe's cache line: Sample records id there and reports whether
// the previous sample had another id. A goroutine that counts alone on its
// stripe is reported at most once (when it takes the stripe over from
// another). Sampling costs the other additions nothing but a test of their
// result, where detecting contention with a compare-and-swap would cost
// more than the addition itself.
func Sample(last *atomic.Uint64, id uint64) (shared bool) {
	prev := last.Load()
	if prev == id {
		return false
	}
	last.Store(id)
	return prev != 0
}

// Added returns how many elements Add has queued since the buffer was
// made (drained or not).
func (b *Striped[T]) Added() uint64 {
	var sum uint64
	for i := range b.stripes {
		sum += b.stripes[i].tail.Load()
	}
	return sum
}

// Count returns the sum of the stripes' counters.
func (b *Striped[T]) Count() uint64 {
	var sum uint64
	for i := range b.stripes {
		sum += b.stripes[i].count.Load()
	}
	return sum
}

// Drain passes every queued element to fn and empties the buffer.
// Only one goroutine may drain at a time. If fn panics, the elements passed
// so far stay drained and the rest stay queued.
func (b *Striped[T]) Drain(fn func(*T)) {
	for i := range b.stripes {
		b.stripes[i].drain(fn)
	}
}

func (s *stripe[T]) drain(fn func(*T)) {
	h := s.head.Load()
	t := s.tail.Load()
	// Deferred: a slot is emptied before its element goes to fn, and an
	// empty slot below tail reads as one a producer has not filled yet,
	// so a head left behind by a panicking fn would stop every later
	// drain of the stripe there, and its Adds would find it full forever.
	defer func() { s.head.Store(h) }()
	for h != t {
		slot := &s.slots[h&(stripeSize-1)]
		p := slot.Load()
		if p == nil {
			// A producer claimed the slot but has not stored yet:
			// stop here and pick it up next time.
			break
		}
		slot.Store(nil)
		h++ // before fn: its slot is empty now
		fn(p)
	}
}

// Reset drops every queued element. Only one goroutine may call it at a
// time, and not concurrently with Drain.
func (b *Striped[T]) Reset() {
	b.Drain(func(*T) {})
}
