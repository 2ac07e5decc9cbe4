package bytecache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The memory beyond the chunks and the index is "about 330 bytes per shard
// plus 25 bytes per chunk" (package doc; README: "a few hundred bytes" per
// shard): evicting an entry whose key straddles a chunk boundary or the
// ring's end must not leave each shard holding a copy of that key (up to
// 64 KiB per shard, 64 MiB with 1024 shards).
func TestLargeKeysLeaveNoPerShardCopy(t *testing.T) {
	const shards = 64
	c := newCache(t, Options{MaxBytes: shards * 256 << 10, Shards: shards})
	small := func(round int) {
		for i := range shards * 4000 {
			set(t, c, fmt.Sprintf("s%d-%d", round, i), strings.Repeat("v", 100), -1)
		}
	}
	heap := func() (int64, Stats) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		s := c.Stats()
		h := int64(m.HeapAlloc) - s.IndexBytes
		if !c.offHeap {
			h -= s.ChunkBytes
		}
		return h, s
	}
	small(0) // every chunk allocated, the rings wrapped
	h0, s0 := heap()

	big := strings.Repeat("k", 60000)
	for i := range shards * 20 {
		set(t, c, fmt.Sprint(big, i), "", -1) // keys straddle the rings' ends, then are evicted
	}
	small(1) // only small entries again
	h1, s1 := heap()
	if s1.ChunkBytes != s0.ChunkBytes || s1.Evictions == s0.Evictions {
		t.Fatalf("setup: %+v then %+v", s0, s1)
	}
	if grown := h1 - h0; grown > 512<<10 {
		t.Fatalf("the heap beyond chunks and index grew by %d bytes (%d per shard) after large keys were evicted", grown, grown/shards)
	}
}
