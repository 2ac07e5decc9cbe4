package footprint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/memstat"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// TestChartAllAboveAxis: Report.Chart panicked (gonum: "Values must be
// greater than 0 for a log scale") when no cache had a figure at or below
// the chart's 400-byte axis top, as in `memory -caches ristretto -sizes
// 1000`: chart.Lines left the log X axis without a point, so its range
// was 0..0, and cmd/memory died after measuring. The chart must be drawn,
// the series in its legend as "(above the axis)".
func TestChartAllAboveAxis(t *testing.T) {
	rep := Report{Header: report.Header{Command: "go run ./bench/cmd/memory"}, Sizes: []int{1000}, TTL: "1h", Rounds: 1,
		Caches: []string{"ristretto"}, Configs: []string{"r"},
		Results: []Result{{Cache: "ristretto", Entries: 1000, Held: 1000,
			Memory: memstat.Delta{HeapInuse: 586_000, RSS: 600_000, HeapObjects: 3000}}}}
	dir := t.TempDir()
	var name string
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Chart panicked with every figure above the axis: %v", p)
			}
		}()
		name, err = rep.Chart(dir)
	}()
	if err != nil {
		t.Fatalf("Chart: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Error(err)
	}
}
