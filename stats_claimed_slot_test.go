package cachekit

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cachekit/cachekit/internal/buffer"
)

// ctQueue mirrors buffer.Queue's layout, to stand for a writer preempted
// between claiming a slot of the write queue and writing its record.
type ctQueue[T any] struct {
	_     [buffer.CacheLine]byte
	tail  atomic.Uint64
	_     [buffer.CacheLine - 8]byte
	head  atomic.Uint64
	_     [buffer.CacheLine - 8]byte
	cells []struct {
		seq atomic.Uint64
		val T
	}
	mask uint64
}

// Stats documents that Weight reflects every write that returned before
// Stats was called. A writer preempted between claiming its slot of the
// write queue and filling it (a few instructions, but preemptible) must
// not hide the records queued behind it, of writes that have returned.
func TestStatsWeightBehindClaimedSlot(t *testing.T) {
	h := Must(Options[int, int]{MaxWeight: 1000, Weigher: func(k, v int) uint32 { return uint32(v) }})
	h.Close() // maintenance runs on the test's goroutines only
	c := h.c
	if unsafe.Sizeof(ctQueue[event[int, int]]{}) != unsafe.Sizeof(*c.writes) {
		t.Fatal("ctQueue no longer mirrors buffer.Queue's layout: update it")
	}
	q := (*ctQueue[event[int, int]])(unsafe.Pointer(c.writes))
	pos := q.tail.Load()
	if !q.tail.CompareAndSwap(pos, pos+1) { // a writer claims a slot...
		t.Fatal("setup: claim failed")
	}
	finish := func() { // ...and writes its record (a removal of an entry never indexed)
		x := newEntry[int, int](-1, 0)
		cell := &q.cells[pos&q.mask]
		cell.val = event[int, int]{e: x, old: x}
		cell.seq.Store(pos + 1)
	}
	h.Set(1, 7) // returns; its record is queued behind the claimed slot
	res := make(chan Stats, 1)
	go func() { res <- h.Stats() }()
	var s Stats
	for done := false; !done; {
		select {
		case s = <-res:
			finish()
			done = true
			continue
		default:
		}
		buf := make([]byte, 1<<20)
		if strings.Contains(string(buf[:runtime.Stack(buf, true)]), ").awaitWrites(") {
			finish() // Stats waits for the slot: the writer resumes
			s = <-res
			done = true
			continue
		}
		time.Sleep(time.Millisecond)
	}
	if s.Weight != 7 || s.Entries != 1 {
		t.Errorf("Stats after Set(1, 7) returned: Entries %d, Weight %d; want 1 and 7", s.Entries, s.Weight)
	}
	if err := h.checkInvariants(); err != nil {
		t.Error(err)
	}
}
