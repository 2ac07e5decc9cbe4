package footprint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/subproc"
)

func TestMain(m *testing.M) {
	var j Job
	child, err := subproc.Job(&j)
	if !child {
		os.Exit(m.Run())
	}
	if err == nil {
		var r Result
		if r, err = RunJob(j); err == nil {
			err = subproc.Reply(r)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func TestPairs(t *testing.T) {
	keys, vals := Pairs(1001)
	if len(keys[1000]) != 16 || len(vals[0]) != 16 || keys[7] == keys[8] || keys[3] == vals[3] {
		t.Errorf("pairs %q %q %q", keys[1000], vals[0], keys[7])
	}
}

// TestMeasure measures a map and cachekit in child processes: every
// entry is held, and a map of 20,000 pairs costs more than nothing and
// less than 200 bytes per entry beyond them. With churn, only the bounded
// cachekit is measured again, and it still holds its 20,000 entries.
func TestMeasure(t *testing.T) {
	res, err := Measure(Config{Caches: []string{"map", "cachekit"}, Sizes: []int{20_000}, TTL: time.Hour, Rounds: 2, Churn: 1, Args: []string{"-test.run=^$"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results, want 6 (map twice, cachekit twice with churn and twice without)", len(res))
	}
	rep := Report{Header: report.Header{Command: "go run ./bench/cmd/memory"}, Sizes: []int{20_000}, TTL: "1h0m0s", Rounds: 2, Churn: 1,
		Caches: []string{"map", "cachekit"}, Configs: []string{"m", "c"}, Results: res}
	if _, ok := rep.ChurnCell("map", 20_000); ok {
		t.Error("the unbounded map was churned")
	}
	if c, ok := rep.ChurnCell("cachekit", 20_000); !ok || c.Held != 20_000 || c.HeapOverhd <= 0 {
		t.Errorf("cachekit after churn: %+v, %v", c, ok)
	}
	if ct := rep.ChurnTable(); !strings.Contains(ct, "| cachekit |") || strings.Contains(ct, "| map |") {
		t.Errorf("the churn table:\n%s", ct)
	}
	m, ok := rep.Cell("map", 20_000)
	if !ok || m.Held != 20_000 || m.HeapOverhd <= 0 || m.HeapOverhd > 200 {
		t.Errorf("map: %+v", m)
	}
	c, ok := rep.Cell("cachekit", 20_000)
	if !ok || c.Held != 20_000 || c.HeapOverhd <= m.HeapOverhd {
		t.Errorf("cachekit %+v, map %+v", c, m)
	}
	dir := t.TempDir()
	name, err := rep.Chart(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Error(err)
	}
	md := rep.Markdown(name)
	for _, want := range []string{"| map |", "| cachekit |", "×)", "minus the 32 bytes", "after churn"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

func TestRunJobRejects(t *testing.T) {
	if _, err := RunJob(Job{Cache: "map"}); err == nil {
		t.Error("a job of no entries ran")
	}
	if _, err := RunJob(Job{Cache: "map", Entries: 1, Churn: -1}); err == nil {
		t.Error("a job of negative churn ran")
	}
	if _, err := RunJob(Job{Cache: "nope", Entries: 1}); err == nil {
		t.Error("an unknown cache ran")
	}
}
