package chart

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
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
