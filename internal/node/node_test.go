package node

import (
	"testing"
	"unsafe"
)

func keys(l *List) []uint64 {
	var out []uint64
	for n := l.Front(); n != nil; n = n.Next() {
		out = append(out, KeyedHash(n))
	}
	return out
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestList(t *testing.T) {
	var l List
	n := make([]*Node, 5)
	for i := range n {
		n[i] = NewKeyed(uint64(i), uint32(i+1))
	}
	l.PushBack(n[1])
	l.PushBack(n[2])
	l.PushFront(n[0])
	if got := keys(&l); !equal(got, []uint64{0, 1, 2}) || l.Len() != 3 || l.Weight() != 6 {
		t.Fatalf("list %v len %d weight %d", got, l.Len(), l.Weight())
	}
	l.MoveToBack(n[0])
	if got := keys(&l); !equal(got, []uint64{1, 2, 0}) {
		t.Fatalf("after MoveToBack: %v", got)
	}
	l.Replace(n[2], n[3])
	if got := keys(&l); !equal(got, []uint64{1, 3, 0}) || l.Weight() != 2+4+1 {
		t.Fatalf("after Replace: %v weight %d", got, l.Weight())
	}
	if n[2].Next() != nil || n[2].Prev() != nil {
		t.Fatal("replaced node keeps its links")
	}
	l.Remove(n[1])
	l.Remove(n[0])
	if got := keys(&l); !equal(got, []uint64{3}) || l.Front() != n[3] || l.Back() != n[3] {
		t.Fatalf("after Remove: %v", got)
	}
	l.Remove(n[3])
	if l.Len() != 0 || l.Weight() != 0 || l.Front() != nil || l.Back() != nil {
		t.Fatal("list not empty")
	}
}

// TestSize pins the node's size: it is part of every cache entry and of
// every key of the miniature simulations, so growing it costs memory.
func TestSize(t *testing.T) {
	want := uintptr(16 + 8) // two links, Weight+Queue+Flags+Tag+Mark
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 8 + 8
	}
	if got := unsafe.Sizeof(Node{}); got != want {
		t.Errorf("Sizeof(Node) = %d, want %d", got, want)
	}
}
