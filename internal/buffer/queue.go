package buffer

import "sync/atomic"

// Queue is a bounded multi-producer, single-consumer FIFO queue (Vyukov's
// bounded queue with per-cell sequence numbers). Push may be called
// concurrently from any goroutine; Pop only by one goroutine at a time.
// Nothing is ever dropped: Push reports a full queue and the caller decides.
type Queue[T any] struct {
	_     [CacheLine]byte
	tail  atomic.Uint64 // next position to push
	_     [CacheLine - 8]byte
	head  atomic.Uint64 // next position to pop
	_     [CacheLine - 8]byte
	cells []cell[T]
	mask  uint64
}

type cell[T any] struct {
	seq atomic.Uint64
	val T
}

// NewQueue returns a queue holding up to capacity elements, rounded up to a
// power of two (at least 2).
func NewQueue[T any](capacity int) *Queue[T] {
	size := 2
	for size < capacity {
		size <<= 1
	}
	q := &Queue[T]{cells: make([]cell[T], size), mask: uint64(size - 1)}
	for i := range q.cells {
		q.cells[i].seq.Store(uint64(i))
	}
	return q
}

// Cap returns the queue's capacity.
func (q *Queue[T]) Cap() int { return len(q.cells) }

// Push appends v and reports true, or reports false if the queue is full.
func (q *Queue[T]) Push(v T) bool {
	_, ok := q.PushAt(v)
	return ok
}

// PushAt is Push that also returns v's position: the number of elements
// pushed before it since the queue was made.
func (q *Queue[T]) PushAt(v T) (uint64, bool) {
	for {
		pos := q.tail.Load()
		c := &q.cells[pos&q.mask]
		seq := c.seq.Load()
		switch {
		case seq == pos:
			if q.tail.CompareAndSwap(pos, pos+1) {
				c.val = v
				c.seq.Store(pos + 1)
				return pos, true
			}
		case seq < pos:
			return 0, false // the cell still holds an element from a lap ago
		}
		// seq > pos: another producer took this position; retry.
	}
}

// Pop removes and returns the oldest element. It reports false when the
// queue is empty or the oldest position is claimed but not yet written.
func (q *Queue[T]) Pop() (T, bool) {
	var zero T
	pos := q.head.Load()
	c := &q.cells[pos&q.mask]
	if c.seq.Load() != pos+1 {
		return zero, false
	}
	v := c.val
	c.val = zero
	c.seq.Store(pos + q.mask + 1)
	q.head.Store(pos + 1)
	return v, true
}

// Pushed returns the number of positions claimed by Push since the queue
// was made (some perhaps not written yet); Popped the number of elements
// popped.
func (q *Queue[T]) Pushed() uint64 { return q.tail.Load() }

// Popped: see Pushed.
func (q *Queue[T]) Popped() uint64 { return q.head.Load() }

// Len returns the number of elements pushed and not yet popped (a snapshot).
// It reads the head first: the tail read after it is at least as far on,
// so the result is never negative, even while the consumer pops.
func (q *Queue[T]) Len() int {
	h := q.head.Load()
	return int(q.tail.Load() - h)
}
