package visibility

import "testing"

// TestProbeKeysApart checks that the shared set of sharedProbe and the
// updated keys of RunProbe are disjoint, as Measure's capacity check
// assumes: the shared set's keys were mix(2<<61 | j), which is
// mix(1<<62 | j), goroutine 0's update keys.
func TestProbeKeysApart(t *testing.T) {
	updated := make(map[uint64]bool)
	for g := range 64 {
		for j := range updateKeys {
			updated[updateKey(g, j)] = true
		}
	}
	for j := range uint64(sharedKeys) {
		if updated[sharedKey(j)] {
			t.Fatalf("shared key %d is also an update key", j)
		}
	}
}
