package replay

import (
	"testing"
)

// TestChartWithoutGoroutines: a report without goroutine counts (a
// JSON file without them) has no chart: an error, not a panic
// (slices.Max of nothing).
func TestChartWithoutGoroutines(t *testing.T) {
	r := Report{Traces: []TraceInfo{{Trace: Trace{"t", 10}}}, Caches: []string{"xsync"}}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Chart without goroutine counts panicked: %v", p)
		}
	}()
	if _, err := r.Chart(t.TempDir()); err == nil {
		t.Error("Chart without goroutine counts succeeded")
	}
}
