package bench

import (
	"fmt"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/puzpuzpuz/xsync/v4"
)

// BenchmarkEntrySize is GetPut's pure hit path (100/0, GOMAXPROCS
// goroutines) through xsync.Map with values of 8, 16, 24 and 40 bytes, so
// that its entries (key and value, one allocation each) take 16, 24, 32
// and 48 bytes, the last being the size of a cachekit entry for uint64 keys
// and values (its policy links and a word of weight and flags make 40
// bytes, allocated as 48). It measures what the target "a hit costs at
// most 1.3× an xsync.Map load" asks of an entry's size, with nothing else
// changed. Names: EntrySize/bytes=32.
//
// go test -run XXX -bench EntrySize -benchtime 2s -count 3
func BenchmarkEntrySize(b *testing.B) {
	w := loadWorkload(b, "getput")
	sizes := []struct {
		bytes int
		new   func() adapter.Cache
	}{
		{16, func() adapter.Cache { return &xsyncWide[[1]uint64]{m: xsync.NewMap[uint64, [1]uint64]()} }},
		{24, func() adapter.Cache { return &xsyncWide[[2]uint64]{m: xsync.NewMap[uint64, [2]uint64]()} }},
		{32, func() adapter.Cache { return &xsyncWide[[3]uint64]{m: xsync.NewMap[uint64, [3]uint64]()} }},
		{48, func() adapter.Cache { return &xsyncWide[[5]uint64]{m: xsync.NewMap[uint64, [5]uint64]()} }},
	}
	for _, s := range sizes {
		info := adapter.Info{Name: fmt.Sprintf("xsync-%dB", s.bytes), New: func(int) adapter.Cache { return s.new() }}
		b.Run(fmt.Sprintf("bytes=%d", s.bytes), func(b *testing.B) {
			benchCell(b, info, w, 100, 1)
		})
	}
}

// xsyncWide is an xsync.Map whose value is an array of words, the first of
// which holds the workload's value.
type xsyncWide[A [1]uint64 | [2]uint64 | [3]uint64 | [5]uint64] struct {
	m *xsync.Map[uint64, A]
}

func (a *xsyncWide[A]) Name() string { return "xsync-wide" }

func (a *xsyncWide[A]) Get(key uint64) (uint64, bool) {
	v, ok := a.m.Load(key)
	return v[0], ok
}

func (a *xsyncWide[A]) Set(key, value uint64) {
	var v A
	v[0] = value
	a.m.Store(key, v)
}

func (a *xsyncWide[A]) Close()   {}
func (a *xsyncWide[A]) Len() int { return a.m.Size() }
