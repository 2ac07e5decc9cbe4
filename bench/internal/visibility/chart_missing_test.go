package visibility

import (
	"math"
	"testing"
)

// The chart gave a replay cell that was not measured the value 0 (a hit
// ratio of 0%) instead of NaN, which chart.Series documents as missing;
// it now passes NaN, and the chart leaves a gap.
func TestChartMissingCellIsNotZero(t *testing.T) {
	rep := Report{Rounds: 1, ReplayCapacity: 16, ReplayGoroutines: 2, ReplayCaches: []string{"cachekit", "lru"},
		Results: &Results{Replays: []Replay{
			{Cache: "cachekit", Goroutines: 1, Requests: 10, Hits: 5}, {Cache: "cachekit", Goroutines: 2, Requests: 10, Hits: 5},
			{Cache: "lru", Goroutines: 1, Requests: 10, Hits: 4}, // no 2-goroutine replay of lru
		}}}
	ch := rep.bars()
	if len(ch.Series) != 2 {
		t.Fatalf("%d series", len(ch.Series))
	}
	if v := ch.Series[1].Values[1]; !math.IsNaN(v) {
		t.Errorf("lru's unmeasured 2-goroutine replay is charted as %v%%, want NaN (missing)", v)
	}
}
