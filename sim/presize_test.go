package sim

import (
	"runtime"
	"testing"
)

// totalAlloc returns the bytes allocated so far by the process.
func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// A tiny trace replayed at a large capacity must not cost memory in
// proportion to the capacity: the index map was pre-sized to
// min(capacity, 1<<22)+1 entries whatever the trace's length (over 100 MB
// for a 6-request trace at capacity 1<<22).
func TestTinyTraceLargeCapacity(t *testing.T) {
	tr := NewTrace([]uint64{1, 2, 3, 1, 2, 4})
	for _, name := range policyNames() {
		before := totalAlloc()
		c, err := tr.NewCache(name, 1<<22)
		if err != nil {
			t.Fatal(err)
		}
		Replay(c, tr.Keys())
		grown := totalAlloc() - before
		runtime.KeepAlive(c)
		t.Logf("%s: %d kB", name, grown>>10)
		if grown > 1<<20 {
			t.Errorf("%s: a 6-request trace at capacity 1<<22 allocated %d kB", name, grown>>10)
		}
	}
}

func policyNames() []string {
	var out []string
	for _, n := range Names() {
		if n != NameCache {
			out = append(out, n)
		}
	}
	return out
}
