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

// TestInstances checks that MinTotal makes small sizes build several
// caches, and that RunJob measures them together: every instance holds
// its entries, and the per-entry figures divide by all of them (a
// cachekit Cache costs more than a map per entry, not K times more).
func TestInstances(t *testing.T) {
	cfg := Config{MinTotal: 10_000}
	for _, c := range []struct{ size, want int }{{1_000, 10}, {3_000, 4}, {10_000, 1}, {20_000, 1}} {
		if got := cfg.instances(c.size); got != c.want {
			t.Errorf("instances(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	if got := (Config{}).instances(1_000); got != 1 {
		t.Errorf("without MinTotal, instances(1000) = %d, want 1", got)
	}
	if _, err := RunJob(Job{Cache: "map", Entries: 1, Instances: -1}); err == nil {
		t.Error("a job of negative instances ran")
	}
	one, err := RunJob(Job{Cache: "cachekit", Entries: 2_000, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r, err := RunJob(Job{Cache: "cachekit", Entries: 2_000, TTL: time.Hour, Instances: 8})
	if err != nil {
		t.Fatal(err)
	}
	if r.Instances != 8 || r.Held != 2_000 {
		t.Errorf("8 instances: %+v", r)
	}
	// One cache of 2,000 entries is measured to within a few pages (8 kB
	// each, 4 bytes per entry); eight together must come out near it.
	if per, single := r.HeapPerEntry(), one.HeapPerEntry(); per <= PairBytes || per > single*1.25 || per < single*0.75 {
		t.Errorf("8 instances: %.1f bytes per entry, one alone %.1f", per, single)
	}
}
