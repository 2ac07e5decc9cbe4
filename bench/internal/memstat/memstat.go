// Package memstat measures how much memory a process holds, after a
// forced garbage collection: the Go heap in use, the number of heap
// objects, and the resident set (which also counts memory mapped outside
// the Go heap, as fastcache's chunks are).
package memstat

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
)

// Snapshot is the memory a process holds at one moment.
type Snapshot struct {
	// HeapInuse is the bytes of the Go heap's in-use spans
	// (runtime.MemStats.HeapInuse): live objects plus the free space
	// inside their spans.
	HeapInuse uint64 `json:"heap_inuse"`
	// HeapObjects is the number of live heap objects: what the garbage
	// collector has to mark.
	HeapObjects uint64 `json:"heap_objects"`
	// RSS is the resident set size from /proc/self/statm, 0 where there
	// is none.
	RSS uint64 `json:"rss"`
}

// Take collects garbage twice (the second pass frees what the first one's
// finalizers and sweeps left), returns the freed pages to the operating
// system, and measures.
func Take() Snapshot {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Snapshot{HeapInuse: ms.HeapInuse, HeapObjects: ms.HeapObjects, RSS: RSS()}
}

// Sub returns s − base field by field, as signed numbers (a measurement
// can shrink).
func (s Snapshot) Sub(base Snapshot) Delta {
	return Delta{
		HeapInuse:   int64(s.HeapInuse) - int64(base.HeapInuse),
		HeapObjects: int64(s.HeapObjects) - int64(base.HeapObjects),
		RSS:         int64(s.RSS) - int64(base.RSS),
	}
}

// Delta is the difference between two snapshots.
type Delta struct {
	HeapInuse   int64 `json:"heap_inuse"`
	HeapObjects int64 `json:"heap_objects"`
	RSS         int64 `json:"rss"`
}

// RSS returns the process's resident set size in bytes, or 0 if it cannot
// be read.
func RSS() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
