//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A chart that cannot be written whole (here: the file size limit,
// RLIMIT_FSIZE, as a full disk would) fails with exit 1 and must not leave
// a truncated chart behind, nor destroy the chart that was there before.
func TestSimChartNotLeftHalfWritten(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.txt"), []byte(strings.Repeat("1\n2\n3\n4\n", 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, "chart.svg")
	const old = "<svg>the previous chart</svg>\n"
	if err := os.WriteFile(chart, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	small := lim
	small.Cur = 1024 // the chart is several kB
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
		t.Skip(err)
	}
	code, _, errOut := runSim(t, "-trace", filepath.Join(dir, "t.txt"), "-capacity", "2,3", "-policy", "lru,opt", "-chart", chart)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	got, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != old {
		t.Errorf("after the failed write the chart's file holds %d bytes (%.40q...), not the previous chart", len(got), got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files left in the directory: %v", names)
	}
}
