package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeJSON writes a replay report to a file and returns its name.
func writeJSON(t *testing.T, body string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestTablesOfTheChartsCount: with -goroutines 16,4 the chart is of
// 16 goroutines, and so must the tables printed be; they were of 4 (the
// last count given).
func TestTablesOfTheChartsCount(t *testing.T) {
	js := writeJSON(t, `{"goroutines": [16, 4], "traces": [{"name": "t", "capacity": 10}], "caches": ["xsync"], "configs": ["m"],
		"results": [{"trace": "t", "capacity": 10, "cache": "xsync", "goroutines": 16, "gets": 10, "hits": 5, "wall": 1000},
			{"trace": "t", "capacity": 10, "cache": "xsync", "goroutines": 4, "gets": 10, "hits": 1, "wall": 1000}]}`)
	var stdout bytes.Buffer
	if err := run([]string{"-from-json", js}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "16 goroutines") || !strings.Contains(stdout.String(), "50.00") {
		t.Errorf("the tables are not of 16 goroutines, the chart's:\n%s", stdout.String())
	}
}

// TestFromJSONWithoutGoroutines: a JSON file without goroutine counts
// is an error, not a panic (index out of range).
func TestFromJSONWithoutGoroutines(t *testing.T) {
	js := writeJSON(t, `{"traces": [{"name": "t", "capacity": 10}], "caches": ["xsync"]}`)
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("run -from-json without goroutine counts panicked: %v", p)
		}
	}()
	err := run([]string{"-from-json", js}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no goroutine counts") {
		t.Errorf("run -from-json without goroutine counts = %v, want an error", err)
	}
}

// TestFromJSONWithoutConfigs: a JSON file with fewer configurations
// than caches renders, with a dash for the missing ones; Markdown
// panicked (index out of range).
func TestFromJSONWithoutConfigs(t *testing.T) {
	js := writeJSON(t, `{"goroutines": [2], "traces": [{"name": "t", "capacity": 10}], "caches": ["xsync", "lru"], "configs": ["m"],
		"results": [{"trace": "t", "capacity": 10, "cache": "xsync", "goroutines": 2, "gets": 10, "hits": 5, "wall": 1000}]}`)
	md := filepath.Join(t.TempDir(), "replay.md")
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("run -from-json with fewer configs than caches panicked: %v", p)
		}
	}()
	if err := run([]string{"-from-json", js, "-md", md}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "| lru | – |") {
		t.Errorf("the caches' table lacks lru without a configuration:\n%s", b)
	}
}
