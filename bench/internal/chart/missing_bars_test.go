package chart

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMissingValueHasNoBar: a NaN value (missing, as Series documents)
// leaves a gap: one bar fewer than a present value, not a bar of length
// 0 drawn in its place.
func TestMissingValueHasNoBar(t *testing.T) {
	dir := t.TempDir()
	paths := func(name string, values ...float64) int {
		t.Helper()
		b := Bars{Title: "t", Label: "x", Categories: []string{"a", "b", "c"},
			Series: []Series{{Name: "s", Values: values}, {Name: "u", Values: []float64{1, 2, 3}}}}
		path := filepath.Join(dir, name)
		if err := b.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(data), "<path")
	}
	all := paths("all.svg", 1, 2, 3)
	for _, tc := range []struct {
		name   string
		values []float64
	}{
		{"top.svg", []float64{math.NaN(), 2, 3}},
		{"middle.svg", []float64{1, math.NaN(), 3}},
		{"bottom.svg", []float64{1, 2, math.NaN()}},
	} {
		if got := paths(tc.name, tc.values...); got != all-1 {
			t.Errorf("%v: %d paths, want %d (one bar fewer than %d)", tc.values, got, all-1, all)
		}
	}
	if got := paths("none.svg", math.NaN(), math.NaN(), math.NaN()); got >= all-2 {
		t.Errorf("a series of missing values: %d paths, want fewer than %d", got, all-2)
	}
}

func TestPresentRuns(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		vals []float64
		want [][2]int
	}{
		{nil, nil},
		{[]float64{nan, nan}, nil},
		{[]float64{1, 2, 3}, [][2]int{{0, 3}}},
		{[]float64{nan, 1, 2, nan, 3}, [][2]int{{1, 3}, {4, 5}}},
		{[]float64{0, nan}, [][2]int{{0, 1}}},
	} {
		if got := presentRuns(tc.vals); !slices.Equal(got, tc.want) {
			t.Errorf("presentRuns(%v) = %v, want %v", tc.vals, got, tc.want)
		}
	}
}
