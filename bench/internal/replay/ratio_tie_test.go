package replay

import (
	"strings"
	"testing"
	"time"
)

// A read time 0.4% below cachekit's (996 against 1000 ns/op) was shown as
// "(1.00×)", a tie, because report.Ratio rounded to two decimals; a ratio
// that is not 1 now gets the decimals it needs ("0.996×").
func TestRatioJustBelowOneIsNotATie(t *testing.T) {
	r := &Report{
		Rounds: 1, Goroutines: []int{1}, Caches: []string{"cachekit", "otter"},
		Traces: []TraceInfo{{Trace: Trace{"t", 10}}},
		Results: []Result{
			{Trace: "t", Capacity: 10, Cache: "cachekit", Goroutines: 1, Gets: 1000, Hits: 500, GetTime: 1000 * time.Microsecond, Wall: time.Millisecond},
			{Trace: "t", Capacity: 10, Cache: "otter", Goroutines: 1, Gets: 1000, Hits: 500, GetTime: 996 * time.Microsecond, Wall: time.Millisecond},
		},
	}
	tab := r.Table(Trace{"t", 10}, 1)
	if strings.Contains(tab, "996.0 (1.00×)") {
		t.Errorf("otter's 996 ns/op against cachekit's 1000 is shown as a tie:\n%s", tab)
	}
}
