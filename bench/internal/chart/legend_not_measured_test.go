package chart

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svgOf draws a chart to an SVG file and returns its text.
func svgOf(t *testing.T, draw func(path string) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.svg")
	if err := draw(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A line series with no value at all (NaN at every X: the cache was not
// measured) keeps its legend entry, marked "(not measured)": it was
// skipped altogether, legend included, so the chart silently left the
// cache out.
func TestLinesAllMissingSeriesInLegend(t *testing.T) {
	nan := math.NaN()
	l := Lines{Title: "t", XLabel: "x", YLabel: "y", X: []float64{1, 2},
		Series: []Series{{Name: "measuredcache", Values: []float64{1, 2}}, {Name: "ghostcache", Values: []float64{nan, nan}}}}
	svg := svgOf(t, l.WriteFile)
	if !strings.Contains(svg, "measuredcache") {
		t.Fatalf("the SVG has no legend text for the measured series (cannot check the other):\n%.2000s", svg)
	}
	if !strings.Contains(svg, "ghostcache (not measured)") {
		t.Errorf("the series with no value is not in the legend as not measured")
	}
	if strings.Contains(svg, "measuredcache (not measured)") {
		t.Errorf("the measured series is marked not measured")
	}
	// Measured, but every value above YMax: in the legend, not called
	// unmeasured.
	l.YMax = 0.5
	if svg := svgOf(t, l.WriteFile); !strings.Contains(svg, "measuredcache (above the axis)") {
		t.Errorf("the series drawn above YMax is not in the legend as above the axis")
	}
}

// A bar series with every value missing likewise keeps its legend entry,
// marked "(not measured)": the legend named a series only when a bar was
// drawn, so a whole series vanished from the chart without a word.
func TestBarsAllMissingSeriesInLegend(t *testing.T) {
	nan := math.NaN()
	for _, log := range []bool{false, true} {
		b := Bars{Title: "t", Label: "x", Categories: []string{"a", "b"}, Log: log,
			Series: []Series{{Name: "measuredseries", Values: []float64{1, 2}}, {Name: "ghostseries", Values: []float64{nan, nan}}}}
		svg := svgOf(t, b.WriteFile)
		if !strings.Contains(svg, "measuredseries") {
			t.Fatalf("log %v: the SVG has no legend text for the measured series", log)
		}
		if !strings.Contains(svg, "ghostseries (not measured)") {
			t.Errorf("log %v: the series with no bar is not in the legend as not measured", log)
		}
	}
}
