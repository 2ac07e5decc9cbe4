package replay

import "testing"

// A trace given twice at one capacity would be replayed twice and its
// results mixed into the same cells (twice the rounds in each median) and
// its sections written twice: the list is refused, as -caches and
// -goroutines refuse repeated values.
func TestParseTracesRefusesRepeats(t *testing.T) {
	for _, bad := range []string{"a@10,a@10", "a@10, b@5, a@10 "} {
		if ts, err := ParseTraces(bad); err == nil {
			t.Errorf("ParseTraces(%q) = %v, want an error", bad, ts)
		}
	}
	// The same trace at two capacities is two replays.
	if ts, err := ParseTraces("a@10,a@20"); err != nil || len(ts) != 2 {
		t.Errorf("ParseTraces(a@10,a@20) = %v, %v", ts, err)
	}
}
