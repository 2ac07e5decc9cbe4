package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/gcimpact"
	"github.com/cachekit/cachekit/bench/internal/memstat"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// The details table's memory columns are in MiB (bytes / 2^20, as the
// other documents write MiB for powers of two): they were headed "heap MB"
// and "resident MB", about 4.9% off a megabyte. A growth of exactly
// 100 MiB shows as 100.0 under "heap MiB" and "resident MiB". (Found by a
// review helper; articles.md and bytecache.md had the same headings.)
func TestMemoryColumnsAreMiB(t *testing.T) {
	dir := t.TempDir()
	rep := gcimpact.Report{
		Header: report.Header{Command: "go run ./bench/cmd/gc", Date: "2025-01-02 03:04 UTC", GoVersion: "go1.25", OSArch: "linux/amd64", CPU: "cpu", Cores: 4, GOMAXPROCS: 4},
		Sizes:  []int{1000}, Rounds: 1,
		Template: gcimpact.Job{ValueBytes: 100, ForcedGCs: 5, ChurnRate: 1000, RequestRate: 1000, MinWindow: time.Second, MaxWindow: 2 * time.Second, MinCycles: 1, Seed: 1},
		Caches:   gcimpact.Describe([]string{"map"}),
		Results: []gcimpact.Result{{Cache: "map", Entries: 1000, Held: 1000,
			Memory: memstat.Delta{HeapInuse: 100 << 20, RSS: 100 << 20, HeapObjects: 2000},
			Fill:   time.Second, FillMaxSet: time.Millisecond, Forced: []time.Duration{time.Millisecond},
			Window: time.Second, Cycles: 2, P50: time.Microsecond, P99: time.Microsecond, P999: time.Microsecond, MaxLatency: time.Microsecond}},
	}
	b, err := json.Marshal(&rep)
	if err != nil {
		t.Fatal(err)
	}
	js, md := filepath.Join(dir, "gc.json"), filepath.Join(dir, "gc.md")
	if err := os.WriteFile(js, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-from-json", js, "-md", md}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var head, row []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "| cache | entries held |") {
			head = strings.Split(line, "|")
		}
		if head != nil && strings.HasPrefix(line, "| map |") {
			row = strings.Split(line, "|")
			break
		}
	}
	if head == nil || row == nil {
		t.Fatalf("no details table:\n%s", out)
	}
	seen := 0
	for i, h := range head {
		h = strings.TrimSpace(h)
		if h == "heap MiB" || h == "resident MiB" {
			seen++
			if got := strings.TrimSpace(row[i]); got != "100.0" {
				t.Errorf("%s of 100 MiB = %s, want 100.0", h, got)
			}
		}
	}
	if seen != 2 {
		t.Errorf("the details table has %d of the columns heap MiB and resident MiB, want 2: %q", seen, head)
	}
}
