package articles

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/memstat"
)

// TestTableWithoutCachekit: `cmd/articles -caches otter,lru` measures, then
// prints rep.Table(nil, "cachekit"), without the baseline: the table has
// no ratios but must not panic (it once indexed the missing baseline's
// NsPerOp, losing the run, whose JSON and Markdown are written after it).
func TestTableWithoutCachekit(t *testing.T) {
	res := func(ns time.Duration) Result {
		return Result{Held: 10, Memory: memstat.Delta{HeapInuse: 1 << 20},
			Phases: []Phase{{WritePct: 10, Ops: 1000, Gets: 900, Hits: 900, Elapsed: ns * 1000}}}
	}
	rep := Report{Entries: 10, Goroutines: 2, Duration: "1s", Rounds: 1, WritePcts: []float64{10},
		Caches: []Cache{{Name: "otter", Results: []Result{res(100)}}, {Name: "lru", Results: []Result{res(200)}}}}
	var out string
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Table without cachekit panicked: %v", p)
			}
		}()
		out = rep.Table(nil, "cachekit")
	}()
	if !strings.Contains(out, "| otter |") || !strings.Contains(out, "200.0") {
		t.Errorf("table:\n%s", out)
	}
}
