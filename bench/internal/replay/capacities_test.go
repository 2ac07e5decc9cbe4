package replay

import (
	"strings"
	"testing"
)

// The same trace may be replayed at several capacities (-traces
// t@10,t@1000): each "## t @capacity" section must show that capacity's
// results, not the median of all capacities' results.
func TestSectionsSeparateCapacities(t *testing.T) {
	r := &Report{
		Rounds: 1, Goroutines: []int{2}, Caches: []string{"cachekit"}, Configs: []string{""},
		Traces: []TraceInfo{{Trace: Trace{"t", 10}}, {Trace: Trace{"t", 1000}}},
		Results: []Result{
			{Trace: "t", Capacity: 10, Cache: "cachekit", Goroutines: 2, Gets: 100, Hits: 10},
			{Trace: "t", Capacity: 1000, Cache: "cachekit", Goroutines: 2, Gets: 100, Hits: 90},
		},
	}
	md := r.Markdown("")
	small := md[strings.Index(md, "## t @10\n"):strings.Index(md, "## t @1,000\n")]
	big := md[strings.Index(md, "## t @1,000\n"):]
	if !strings.Contains(small, "| 10.00 |") {
		t.Errorf("section t @10 does not show its 10%% hit ratio:\n%s", small)
	}
	if !strings.Contains(big, "| 90.00 |") {
		t.Errorf("section t @1,000 does not show its 90%% hit ratio:\n%s", big)
	}
}
