package sim

import (
	"runtime"
	"testing"
)

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A Policy's memory must follow what the cache holds, not the length of
// the trace replayed through it. Here S3-FIFO keeps 1,500 hot keys (each
// read twice right after its miss, so promoted to main, which never fills)
// while 380,000 keys seen once pass through: one hot key per 254 misses.
// Nodes were carved from slabs of 256 and never reused, so each hot key
// kept its whole 8 kB slab alive: 12 MB for 1,500 entries.
func TestPolicyMemoryFollowsContents(t *testing.T) {
	const hot, cold = 1500, 253
	var keys []uint64
	next := uint64(1 << 40) // cold keys, each seen once
	for h := range uint64(hot) {
		keys = append(keys, h, h, h)
		for range cold {
			keys = append(keys, next)
			next++
		}
	}
	base := liveHeap()
	p, err := NewPolicy("s3fifo", 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	Replay(p, keys)
	grown := liveHeap() - base
	runtime.KeepAlive(p)
	runtime.KeepAlive(keys)
	if p.Len() != 2000 {
		t.Fatalf("holds %d keys, want 2000", p.Len())
	}
	// 2,000 entries: index map, nodes and lists take well under 1 MB.
	if perEntry := grown / 2000; perEntry > 512 {
		t.Fatalf("heap grew by %d kB for %d entries (%d B per entry): evicted nodes are kept alive", grown>>10, p.Len(), perEntry)
	}
}
