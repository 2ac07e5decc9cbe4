package memstat

import (
	"runtime"
	"testing"
)

var sink [][]byte

// TestTakeSeesAnAllocation checks that holding 64 MiB in 4,096 objects
// shows in every figure, and that dropping them takes it away again.
func TestTakeSeesAnAllocation(t *testing.T) {
	const n, size = 4096, 16 << 10
	base := Take()
	for range n {
		b := make([]byte, size)
		for i := range b {
			b[i] = 1 // touch every page, so that the resident set grows
		}
		sink = append(sink, b)
	}
	held := Take().Sub(base)
	t.Logf("holding %d × %d bytes: %+v", n, size, held)
	if held.HeapInuse < n*size || held.HeapInuse > 2*n*size {
		t.Errorf("heap in use grew by %d bytes, want about %d", held.HeapInuse, n*size)
	}
	if held.HeapObjects < n {
		t.Errorf("heap objects grew by %d, want at least %d", held.HeapObjects, n)
	}
	if runtime.GOOS == "linux" && held.RSS < n*size/2 {
		t.Errorf("resident set grew by %d bytes, want about %d", held.RSS, n*size)
	}
	sink = nil
	after := Take().Sub(base)
	if after.HeapInuse > n*size/4 {
		t.Errorf("heap in use still %d bytes above the base after dropping everything", after.HeapInuse)
	}
}
