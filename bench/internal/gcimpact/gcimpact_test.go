package gcimpact

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

func tinyJob(cache string, entries int) Job {
	return Job{Cache: cache, Capacity: max(entries, 100), Entries: entries, ValueBytes: 100, ForcedGCs: 2,
		ChurnRate: 10_000, RequestRate: 2_000, MinWindow: 50 * time.Millisecond, MaxWindow: 200 * time.Millisecond, MinCycles: 1, Seed: 1}
}

// TestRunJob runs small jobs in this process: the entries are held, the
// forced collections and the churn are measured.
func TestRunJob(t *testing.T) {
	for _, c := range []struct {
		cache   string
		entries int
	}{{None, 0}, {"map", 5000}, {"cachekit", 5000}, {"bytecache", 5000}, {"fastcache", 0}} {
		r, err := RunJob(tinyJob(c.cache, c.entries))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%d: %+v", c.cache, c.entries, r)
		if c.cache != None && r.Held != c.entries {
			t.Errorf("%s holds %d of %d entries", c.cache, r.Held, c.entries)
		}
		if filled := c.entries > 0; filled != (r.FillMaxSet > 0) || r.FillMaxSet > r.Fill {
			t.Errorf("%s: fill %v, slowest Set %v", c.cache, r.Fill, r.FillMaxSet)
		}
		if len(r.Forced) < 2 || len(r.Forced) > maxForced || r.ForcedMin() <= 0 || r.ForcedMin() > r.ForcedMedian() {
			t.Errorf("%s: forced collections %v", c.cache, r.Forced)
		}
		if r.Window < 50*time.Millisecond || r.Requests == 0 || r.ChurnSets == 0 || r.P999 < r.P50 || r.MaxLatency < r.P999 {
			t.Errorf("%s: churn window %v, %d requests, %d Sets, p50 %v, p99.9 %v, max %v", c.cache, r.Window, r.Requests, r.ChurnSets, r.P50, r.P999, r.MaxLatency)
		}
		if runtime.GOOS == "linux" && r.ForcedProcessCPU <= 0 {
			t.Errorf("%s: no process CPU measured for the forced collections", c.cache)
		}
		// runtime/metrics updates the CPU classes only at a collection:
		// a window that ended at MaxWindow without one (a loaded
		// machine) has none to count.
		if (r.Cycles > 0 && r.TotalCPU <= 0) || r.GCCPU < 0 || r.GCCPUPerSecond() < 0 {
			t.Errorf("%s: CPU %v of %v over %d collections", c.cache, r.GCCPU, r.TotalCPU, r.Cycles)
		}
	}
	for _, bad := range []Job{{}, func() Job { j := tinyJob("map", 10); j.Entries = 1000; return j }(), func() Job { j := tinyJob("map", 10); j.MaxWindow = time.Millisecond; return j }()} {
		if _, err := RunJob(bad); err == nil {
			t.Errorf("bad job %+v ran", bad)
		}
	}
}

func TestJobs(t *testing.T) {
	cfg := Config{Caches: []string{"a", "b"}, Sizes: []int{0, 10, 30}, Template: Job{Seed: 5}}
	jobs := cfg.Jobs(1)
	var got []string
	for _, j := range jobs {
		got = append(got, j.Cache+"/"+SizeLabel(j.Entries)+"/"+report.Thousands(j.Capacity))
		if j.Seed != 6 {
			t.Errorf("round 1's seed is %d, want 6", j.Seed)
		}
	}
	want := "none/empty/30 b/empty/30 a/empty/30 b/10/10 a/10/10 b/30/30 a/30/30"
	if strings.Join(got, " ") != want {
		t.Errorf("jobs %v, want %s", got, want)
	}
}

func TestSizeLabel(t *testing.T) {
	for n, want := range map[int]string{0: "empty", 2_000_000: "2M", 500_000: "500k", 1234: "1,234"} {
		if got := SizeLabel(n); got != want {
			t.Errorf("SizeLabel(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestReport(t *testing.T) {
	mk := func(cache string, entries int, forced time.Duration) Result {
		return Result{Cache: cache, Entries: entries, Held: entries, Forced: []time.Duration{2 * forced, forced, 3 * forced}, Window: time.Second,
			Cycles: 3, GCCPU: 0.5, P50: time.Microsecond, P999: time.Millisecond}
	}
	filled := func(r Result) Result {
		r.Fill, r.FillMaxSet = 3*time.Second, 25*time.Millisecond
		return r
	}
	rep := Report{Header: report.Header{Command: "go run ./bench/cmd/gc", GOMAXPROCS: 2}, Sizes: []int{0, 1000}, Template: tinyJob("", 0), Rounds: 1,
		Caches: Describe([]string{"map", "bytecache"}),
		Results: []Result{mk(None, 0, time.Millisecond), mk("map", 0, time.Millisecond), filled(mk("map", 1000, 40*time.Millisecond)),
			mk("bytecache", 0, time.Millisecond), mk("bytecache", 1000, 2*time.Millisecond)}}
	row, ok := rep.Row("map", 1000)
	if !ok || row.ForcedMs != 40 || row.ForcedMedMs != 80 || row.GCCPUPerSec != 0.5 || row.P999us != 1000 {
		t.Errorf("Row = %+v, %v", row, ok)
	}
	dir := t.TempDir()
	charts, err := rep.Charts(dir, "gc", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		if _, err := os.Stat(filepath.Join(dir, c)); err != nil {
			t.Error(err)
		}
	}
	md := rep.Markdown(charts)
	for _, want := range []string{"| none | 1.00 | – |", "| map | 1.00 | 40.00 |", "| map | – | 25.0 |", "| map | 1000 | 3.0 | 25.0 |", "## Details: 1,000 entries", "![gc-forced](gc-forced.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

func TestEmptyResult(t *testing.T) {
	var r Result
	if r.ForcedMedian() != 0 || r.GCCPUPerSecond() != 0 {
		t.Error("an empty result has figures")
	}
}
