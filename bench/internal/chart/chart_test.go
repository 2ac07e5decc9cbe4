package chart

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBarsAndLines(t *testing.T) {
	dir := t.TempDir()
	b := Bars{
		Title:      "test",
		Label:      "ns/op",
		Categories: []string{"a", "b", "c"},
		Series: []Series{
			{Name: "10% writes", Values: []float64{10, 20, math.NaN()}},
			{Name: "0.1% writes", Values: []float64{5, 15, 25}},
		},
	}
	for _, name := range []string{"bars.png", "bars.svg"} {
		path := filepath.Join(dir, name)
		if err := b.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Ext(name) == ".png" && !bytes.HasPrefix(data, []byte("\x89PNG")) {
			t.Errorf("%s is not a PNG", name)
		}
		if filepath.Ext(name) == ".svg" && !bytes.Contains(data, []byte("<svg")) {
			t.Errorf("%s is not an SVG", name)
		}
	}
	b.Log = true
	b.Series[1].Values = []float64{0.05, 15, 25000}
	if err := b.WriteFile(filepath.Join(dir, "log.png")); err != nil {
		t.Fatal(err)
	}
	for e, want := range map[float64]string{-2: "0.01", 0: "1", 3: "1000", 6: "1e+06"} {
		if got := decade(e); got != want {
			t.Errorf("decade(%v) = %q, want %q", e, got, want)
		}
	}
	l := Lines{Title: "lines", X: []float64{1e3, 1e4, 1e5}, LogX: true,
		Series: []Series{{Name: "x", Values: []float64{1, 2, math.NaN()}}, {Name: "none", Values: []float64{math.NaN(), math.NaN(), math.NaN()}}}}
	if err := l.WriteFile(filepath.Join(dir, "lines.png")); err != nil {
		t.Fatal(err)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	if err := (Bars{Title: "empty"}).WriteFile(filepath.Join(dir, "e.png")); err == nil {
		t.Error("an empty chart was drawn")
	}
	b := Bars{Categories: []string{"a"}, Series: []Series{{Name: "s", Values: []float64{1, 2}}}}
	if err := b.WriteFile(filepath.Join(dir, "m.png")); err == nil {
		t.Error("a series of the wrong length was drawn")
	}
	b.Series[0].Values = []float64{1}
	if err := b.WriteFile(filepath.Join(dir, "x.gif")); err == nil {
		t.Error("an unknown format was accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.gif")); err == nil {
		t.Error("a failed chart left a file")
	}
}

func TestLinearTicks(t *testing.T) {
	for _, tc := range []struct {
		top    float64
		labels string
	}{
		{290, "0 50 100 150 200 250"},
		{1.3, "0 0.2 0.4 0.6 0.8 1 1.2"},
		{13, "0 2 4 6 8 10 12"},
		{6e6, "0 1000000 2000000 3000000 4000000 5000000 6000000"},
		{0, "0"},
		{0.00031, "0 0.00005 0.0001 0.00015 0.0002 0.00025 0.0003"},
	} {
		var labels []string
		for _, tk := range linearTicks(tc.top) {
			if tk.Value > tc.top+1e-9 {
				t.Errorf("top %v: tick %v beyond it", tc.top, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.labels {
			t.Errorf("top %v: labels %q, want %q", tc.top, got, tc.labels)
		}
	}
}
