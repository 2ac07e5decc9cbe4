package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The chart draws one line per policy, hit ratio against capacity.
// -capacity takes the capacities in any order, and the rows keep it; the
// line must still go along the x axis (with -capacity 1,100,10 it used to
// run from 1 to 100 and back to 10, drawing a hit ratio between 10 and 100
// that was never measured).
func TestChartLineFollowsCapacityOrder(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "%d\n", (i*i+i/3)%60)
	}
	trace := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, "c.svg")
	code, _, errOut := runSim(t, "-trace", trace, "-capacity", "1,100,10", "-policy", "lru",
		"-format", "csv", "-chart", chart)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	// lru is the first policy: the first colour of the palette, #1F77B4.
	re := regexp.MustCompile(`<path d="(M[^"]*)" style="fill:none;stroke:#1F77B4`)
	found := false
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		pts := strings.Split(strings.TrimPrefix(m[1], "M"), "L")
		if len(pts) != 3 {
			continue // the legend's sample line
		}
		found = true
		var xs []float64
		for _, p := range pts {
			x, err := strconv.ParseFloat(strings.Split(p, ",")[0], 64)
			if err != nil {
				t.Fatalf("path %q: %v", m[1], err)
			}
			xs = append(xs, x)
		}
		if !(xs[0] < xs[1] && xs[1] < xs[2]) {
			t.Errorf("lru's line goes through x = %v: not in capacity order (path %q)", xs, m[1])
		}
	}
	if !found {
		t.Fatalf("no 3-point line of lru in the chart:\n%.3000s", data)
	}
}
