package hitratio

import (
	"strings"
	"testing"
)

// A point a cache was not measured at (which the per-trace table leaves
// blank and the summary's means skip) was taken for a hit ratio of 0 by
// the loop text and the "every policy of ours" table, and for a point
// behind the best peer by the default's bullet. The loop text now skips
// it, the table leaves its cell blank, and the bullet counts only the
// points it compared.
func TestUnmeasuredIsNotZero(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "lirs-loop", Family: FamilyLoop, About: "loop", Capacities: []int{250, 500, 1250}}, Requests: 10000, Unique: 1011},
	}
	ratios := map[string][]float64{
		NameDefault: {20, -1, 99}, // not measured at 500
		"lru":       {0.5, 0.5, 99},
		"lfu":       {30, -1, 99}, // not measured at 500
		"fifo":      {0.5, 0.5, 99},
		"otter":     {20, 30, 99},
	}
	md := markdownOf(t, pointResults(t, 1, traces, ratios, []string{NameDefault, "lru", "lfu", "fifo", "otter"}))
	if b := bullet(md, "Scans hurt LRU"); strings.Contains(b, "lfu") || strings.Contains(b, "default hits 0.00%") {
		t.Errorf("the loop text counts unmeasured points as 0%%:\n%s", b)
	} else if !strings.Contains(b, "lru, fifo hit less than 1% of the requests, while the default hits 20.00%–20.00%") {
		t.Errorf("the loop text does not give the default's range over the points it was measured at:\n%s", b)
	}
	if strings.Contains(md, "| 500 | 0.00 | **0.50** | 0.00 | **0.50** |") {
		t.Errorf("the table of every policy of ours shows 0.00 for the unmeasured default and lfu at 500 (the main table leaves them blank)")
	}
	if !strings.Contains(md, "| 500 | | **0.50** | | **0.50** |") {
		t.Errorf("the table of every policy of ours does not leave the unmeasured default and lfu blank at 500:\n%s", md)
	}
	if b := bullet(md, "Our default and cache"); !strings.Contains(b, "at 2 of 2 points") {
		t.Errorf("the default was measured at 2 points, within 0.1 of otter at both (the summary says so: %q); the bullet counts the third against it:\n%s",
			"At every point, default is at least the best peer minus 0.1 point.", b)
	}
}

// The table of the points where the default or the Cache is behind the
// best peer showed 0.00 and a bold gap for one of them not measured at
// such a point, and the summary's sentence on how far the two differ took
// the missing figure for 0; the table now leaves the cells blank and the
// sentence compares only the points where both were measured.
func TestUnmeasuredNotBehind(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, About: "t", Capacities: []int{10, 100}}, Requests: 10000, Unique: 500},
	}
	ratios := map[string][]float64{
		NameDefault: {40, 60},
		NameCache:   {-1, 60}, // not measured at 10
		"otter":     {50, 60},
	}
	rs := pointResults(t, 1, traces, ratios, []string{NameDefault, NameCache, "otter"})
	var b strings.Builder
	writeSummary(&b, rs)
	md := b.String()
	if !strings.Contains(md, "| t @10 | 50.00 otter | 40.00 | **-10.00** | | |") {
		t.Errorf("the table of the points behind does not leave the unmeasured cache blank at t @10:\n%s", md)
	}
	if strings.Contains(md, "differ by up to") {
		t.Errorf("the summary takes the unmeasured cache at t @10 for 0%%:\n%s", md)
	}
}
