package workload

import (
	"strings"
	"testing"
)

// TestEvictRefusesHugeCapacity: the key stream is 40× the capacity, so
// a huge -capacity is refused with a clear error; 1<<40 panicked
// (makeslice: len out of range), and smaller huge ones ran out of memory.
func TestEvictRefusesHugeCapacity(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Evict of capacity 1<<40 panicked: %v", p)
		}
	}()
	for _, d := range []Distribution{Zipf, Uniform} {
		if _, err := Evict(d, 1<<40); err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("Evict(%v, 1<<40) = %v, want an error saying it is too large", d, err)
		}
	}
}
