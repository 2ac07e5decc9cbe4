package replay

import (
	"math"
	"testing"
	"time"
)

// The chart gave a cache not replayed on a trace the value 0 (a bar of 0
// requests per second) instead of NaN, which chart.Series documents as
// missing; it now passes NaN, and the chart leaves a gap.
func TestChartMissingCellIsNotZero(t *testing.T) {
	r := &Report{
		Rounds: 1, Goroutines: []int{2}, Caches: []string{"cachekit", "otter"},
		Traces: []TraceInfo{{Trace: Trace{"a", 10}}, {Trace: Trace{"b", 10}}},
		Results: []Result{
			{Trace: "a", Capacity: 10, Cache: "cachekit", Goroutines: 2, Gets: 100, Hits: 50, GetTime: 10 * time.Microsecond, Wall: time.Millisecond},
			{Trace: "a", Capacity: 10, Cache: "otter", Goroutines: 2, Gets: 100, Hits: 40, GetTime: 12 * time.Microsecond, Wall: time.Millisecond},
			{Trace: "b", Capacity: 10, Cache: "cachekit", Goroutines: 2, Gets: 100, Hits: 50, GetTime: 10 * time.Microsecond, Wall: time.Millisecond},
			// no replay of otter on b
		},
	}
	ch := r.bars(2)
	if len(ch.Series) != 2 || len(ch.Series[1].Values) != 2 {
		t.Fatalf("series %+v", ch.Series)
	}
	if v := ch.Series[1].Values[1]; !math.IsNaN(v) {
		t.Errorf("otter's missing replay of b is charted as %v, want NaN (missing)", v)
	}
	if v := ch.Series[0].Values[1]; !(v > 0) {
		t.Errorf("otter's replay of a is charted as %v", v)
	}
	if err := ch.WriteFile(t.TempDir() + "/replay.png"); err != nil {
		t.Fatal(err)
	}
}
