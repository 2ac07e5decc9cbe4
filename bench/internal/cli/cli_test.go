package cli

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	fs := NewFlagSet("x", io.Discard)
	n := fs.Int("n", 1, "")
	if err := Parse(fs, []string{"-n", "3"}); err != nil || *n != 3 {
		t.Fatalf("Parse: %v, n %d", err, *n)
	}
	fs = NewFlagSet("x", io.Discard)
	if err := Parse(fs, []string{"a"}); err == nil || err.Error() != `unexpected arguments: ["a"]` {
		t.Errorf("Parse of a positional argument: %v", err)
	}
	fs = NewFlagSet("x", io.Discard)
	if err := Parse(fs, []string{"-h"}); err != flag.ErrHelp {
		t.Errorf("Parse -h: %v", err)
	}
}

func TestInts(t *testing.T) {
	got, err := Ints("1, 2,3", Positive)
	if err != nil || !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Errorf("Ints: %v, %v", got, err)
	}
	if _, err := Ints("1,0", Positive); err == nil || err.Error() != "0 is not positive" {
		t.Errorf("Ints with a 0: %v", err)
	}
	var bad *IntError
	if _, err := Ints("1, x", nil); !errors.As(err, &bad) || bad.Field != " x" {
		t.Errorf("Ints with a word: %v, field %+v", err, bad)
	}
	// A value given twice would be measured twice under one name.
	if _, err := Ints("1,2, 1", nil); !errors.As(err, &bad) || bad.Field != " 1" {
		t.Errorf("Ints with a repeated value: %v, field %+v", err, bad)
	}
}

func TestOutput(t *testing.T) {
	dir := t.TempDir()
	var o Output
	fs := NewFlagSet("x", io.Discard)
	o.Flags(fs, true)
	md := filepath.Join(dir, "docs", "r.md")
	js := filepath.Join(dir, "r.json")
	if err := Parse(fs, []string{"-md", md, "-json", js, "-chart-dir", filepath.Join(dir, "charts"), "-note", "n"}); err != nil {
		t.Fatal(err)
	}
	type rep struct{ A int }
	var r rep
	measured := false
	if err := o.Load(&r, func() error { measured = true; r.A = 7; return nil }); err != nil || !measured {
		t.Fatalf("Load measured %v: %v", measured, err)
	}
	var chartDir string
	err := o.Write(&r, func(dir string) ([]string, error) {
		chartDir = dir
		return []string{"a.png"}, nil
	}, func(charts []string) string { return strings.Join(charts, ",") })
	if err != nil {
		t.Fatal(err)
	}
	if chartDir != filepath.Join(dir, "charts") {
		t.Errorf("charts drawn into %s", chartDir)
	}
	if b, err := os.ReadFile(md); err != nil || string(b) != "../charts/a.png" {
		t.Errorf("Markdown: %q, %v", b, err)
	}

	// Read again from the JSON: not measured, and the JSON not rewritten.
	o = Output{FromJSON: js, JSON: filepath.Join(dir, "again.json")}
	var back rep
	if err := o.Load(&back, func() error { t.Error("measured instead of reading"); return nil }); err != nil || back.A != 7 {
		t.Fatalf("Load from JSON: %+v, %v", back, err)
	}
	if err := o.Write(&back, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.JSON); !os.IsNotExist(err) {
		t.Errorf("JSON written again from JSON: %v", err)
	}
}
