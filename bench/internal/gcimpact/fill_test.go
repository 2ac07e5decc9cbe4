package gcimpact

import (
	"strings"
	"testing"
	"time"
)

// TestEmptyCacheFill: fillText promises "–" for the fill of an empty
// cache, but RunJob times the wait for its pending writes even with no
// entries, so the details showed "0.0" s of fill (docs/benchmarks/gc.md's
// empty rows). A row of 0 entries shows "–" whatever Fill holds.
func TestEmptyCacheFill(t *testing.T) {
	r := &Report{Sizes: []int{0, 10}, Caches: []Cache{{Name: "map"}}, Results: []Result{
		{Cache: None, Fill: 0, Forced: []time.Duration{time.Millisecond}},
		{Cache: "map", Entries: 0, Fill: 2 * time.Microsecond, Forced: []time.Duration{time.Millisecond}},
		{Cache: "map", Entries: 10, Held: 10, Fill: 300 * time.Millisecond, FillMaxSet: time.Millisecond, Forced: []time.Duration{time.Millisecond}},
	}}
	fill := func(size int) string {
		for line := range strings.SplitSeq(r.DetailTable(size, nil), "\n") {
			if cells := strings.Split(line, "|"); len(cells) > 4 && strings.TrimSpace(cells[1]) == "map" {
				return strings.TrimSpace(cells[3])
			}
		}
		t.Fatalf("no map row at size %d:\n%s", size, r.DetailTable(size, nil))
		return ""
	}
	if got := fill(0); got != "–" {
		t.Errorf("the empty map's fill is %q, want –", got)
	}
	if got := fill(10); got != "0.3" {
		t.Errorf("the full map's fill is %q, want 0.3", got)
	}
}
