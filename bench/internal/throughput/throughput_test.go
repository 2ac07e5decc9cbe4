package throughput

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func lookup(t *testing.T, names ...string) []adapter.Info {
	t.Helper()
	var out []adapter.Info
	for _, n := range names {
		info, ok := adapter.Lookup(n)
		if !ok {
			t.Fatalf("no adapter %q", n)
		}
		out = append(out, info)
	}
	return out
}

func TestRun(t *testing.T) {
	w, err := workload.Evict(workload.Zipf, 1000)
	if err != nil {
		t.Fatal(err)
	}
	s := Run(lookup(t, "cachekit")[0], w, 90, 3, 20*time.Millisecond, 1)
	if s.Ops == 0 || s.Elapsed < 20*time.Millisecond || s.Gets == 0 || s.Hits > s.Gets {
		t.Errorf("Run = %+v", s)
	}
	if h, ok := s.HitRatio(); !ok || h <= 0 || h >= 1 {
		t.Errorf("hit ratio %v, %v; want strictly between 0 and 1 on an evicting workload", h, ok)
	}
	// (A goroutine the scheduler did not run before the stop did nothing.)
	if s.Goroutines != 3 || s.MinOps > s.Ops/3 {
		t.Errorf("Run = %+v: the slowest of 3 goroutines did %d operations of %d", s, s.MinOps, s.Ops)
	}
	if x, ok := s.SlowestShare(); !ok || x < 0 || x > 1 {
		t.Errorf("slowest share %v, %v; want in [0, 1]", x, ok)
	}
	if (Sample{}).OpsPerSec() != 0 {
		t.Error("an empty sample has a throughput")
	}
	if _, ok := (Sample{}).SlowestShare(); ok {
		t.Error("an empty sample has a slowest goroutine")
	}
	if x, _ := (Sample{Ops: 100, Goroutines: 4, MinOps: 20}).SlowestShare(); x != 0.8 {
		t.Errorf("4 goroutines, 100 operations, the slowest 20: share %v, want 0.8", x)
	}
}

// tinyReport measures two caches on a small evicting workload, the way
// the command does.
func tinyReport(t *testing.T) *Report {
	t.Helper()
	w, err := workload.Evict(workload.Uniform, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.ReadPcts = []int{100, 50}
	caches := lookup(t, "xsync", "cachekit")
	var progress bytes.Buffer
	ms, err := Measure(Config{
		Caches:    caches,
		Workloads: []*workload.Workload{w},
		Mults:     []int{1, 2},
		Rounds:    2,
		Duration:  5 * time.Millisecond,
		Seed:      1,
		Progress:  &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 2 * 2; len(ms) != want {
		t.Fatalf("%d measurements, want %d", len(ms), want)
	}
	for _, m := range ms {
		if len(m.Samples) != 2 {
			t.Errorf("%+v: %d samples, want one per round", m.Cell, len(m.Samples))
		}
	}
	if n := strings.Count(progress.String(), "\n"); n != 2*len(ms) {
		t.Errorf("%d progress lines, want %d", n, 2*len(ms))
	}
	return &Report{
		Command: "go run ./bench/cmd/throughput -test", Date: "2026-01-01 00:00 UTC", GoVersion: "go1.x",
		OS: "linux", Arch: "amd64", CPU: "a CPU | with a pipe", Cores: 2, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Modules: []Module{{"example.com/m", "v1.0.0"}}, Note: "noisy", Rounds: 2, Duration: "5ms",
		Mults: []int{1, 2}, LoadBefore: "1, 2, 3", LoadAfter: "4, 5, 6",
		Caches: DescribeCaches(caches), Workloads: DescribeWorkloads([]*workload.Workload{w}),
		Results: Results(ms),
	}
}

func TestResults(t *testing.T) {
	r := tinyReport(t)
	for _, res := range r.Results {
		if len(res.OpsPerSec) != 2 || res.MedianOpsPerSec <= 0 {
			t.Errorf("%+v: bad throughput", res)
		}
		if res.RatioToBaseline == nil {
			t.Fatalf("%+v: no ratio to cachekit", res)
		}
		if res.Cache == Baseline && *res.RatioToBaseline != 1 {
			t.Errorf("cachekit's ratio to itself is %v", *res.RatioToBaseline)
		}
		if res.MedianHitRatio == nil || len(res.HitRatio) != 2 {
			t.Errorf("%+v: no hit ratio", res)
		}
		if res.MedianSlowestShare == nil || len(res.SlowestShare) != 2 {
			t.Errorf("%+v: no slowest goroutine's share", res)
		}
	}
	// Without cachekit there are no ratios.
	rs := Results([]Measurement{{Cell: Cell{"w", 100, 2}, Cache: "xsync", Samples: []Sample{{Ops: 10, Elapsed: time.Second}}}})
	if rs[0].RatioToBaseline != nil || rs[0].MedianOpsPerSec != 10 || rs[0].MedianHitRatio != nil || rs[0].MedianSlowestShare != nil {
		t.Errorf("Results without cachekit = %+v", rs[0])
	}
}

func TestMeasureErrors(t *testing.T) {
	w := workload.GetPut()
	caches := lookup(t, "xsync")
	for _, cfg := range []Config{
		{Caches: caches, Workloads: []*workload.Workload{w}, Mults: []int{1}, Rounds: 0, Duration: time.Millisecond},
		{Workloads: []*workload.Workload{w}, Mults: []int{1}, Rounds: 1, Duration: time.Millisecond},
		{Caches: caches, Mults: []int{1}, Rounds: 1, Duration: time.Millisecond},
	} {
		if _, err := Measure(cfg); err == nil {
			t.Errorf("Measure(%+v) succeeded", cfg)
		}
	}
}

// TestJSON writes and reads a report as the command does (-json,
// -from-json).
func TestJSON(t *testing.T) {
	r := tinyReport(t)
	name := filepath.Join(t.TempDir(), "t.json")
	if err := report.WriteJSON(name, r); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := report.ReadJSON(name, &back); err != nil {
		t.Fatalf("the JSON does not parse: %v\n%s", err, string(raw))
	}
	if back.Command != r.Command || len(back.Results) != len(r.Results) || len(back.Workloads) != 1 ||
		back.Workloads[0].DistinctKeys == 0 || back.Results[0].RatioToBaseline == nil {
		t.Errorf("the JSON lost data: %+v", back)
	}
	for _, key := range []string{`"median_ops_per_sec"`, `"ratio_to_cachekit"`, `"ops_per_sec"`, `"cpu"`, `"go_version"`,
		`"median_slowest_goroutine_share"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("the JSON has no %s", key)
		}
	}
}

// checkTables checks that every Markdown table in s is well formed: a
// header, a separator of the same width, rows of the same width.
func checkTables(t *testing.T, s string) (tables int) {
	t.Helper()
	lines := strings.Split(s, "\n")
	cells := func(line string) int {
		return strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") - 1
	}
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") {
			continue
		}
		tables++
		width := cells(lines[i])
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---") || cells(lines[i+1]) != width {
			t.Errorf("table at line %d has no matching separator:\n%s\n%s", i+1, lines[i], lines[min(i+1, len(lines)-1)])
		}
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
			if cells(lines[i]) != width {
				t.Errorf("line %d has %d cells, want %d: %s", i+1, cells(lines[i]), width, lines[i])
			}
		}
	}
	return tables
}

func TestWriteMarkdown(t *testing.T) {
	r := tinyReport(t)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	procs := runtime.GOMAXPROCS(0)
	// Header table, caches, and per goroutine count a throughput, a
	// hit-ratio and a slowest-goroutine table.
	if n := checkTables(t, md); n != 2+2*3+1 {
		t.Errorf("%d tables, want 9:\n%s", n, md)
	}
	for _, want := range []string{
		"# Throughput", "`go run ./bench/cmd/throughput -test`", "go1.x linux/amd64", `a CPU \| with a pipe, 2 cores`,
		"example.com/m v1.0.0", "> **Note.** noisy", "> **Warning.** The 1-minute load average was 1 when", "1, 2, 3 before, 4, 5, 6 after",
		"## evict-uniform", fmt.Sprintf("### %d goroutines (GOMAXPROCS × 1)", procs), fmt.Sprintf("### %d goroutines (GOMAXPROCS × 2)", 2*procs),
		"| cache | 100% reads | 50% reads |", "×) |", "Hit ratio", "Operations of the slowest of the", "## Spread between rounds", "| cachekit | ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown has no %q:\n%s", want, md)
		}
	}
	var tables bytes.Buffer
	if err := WriteTables(&tables, r); err != nil {
		t.Fatal(err)
	}
	if n := checkTables(t, tables.String()); n != 2*3 {
		t.Errorf("WriteTables wrote %d tables, want 6", n)
	}
}

func TestCharts(t *testing.T) {
	r := tinyReport(t)
	dir := t.TempDir()
	names, err := Charts(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	want := []string{fmt.Sprintf("throughput-evict-uniform-%dg.png", procs), fmt.Sprintf("throughput-evict-uniform-%dg.png", 2*procs)}
	if !slices.Equal(names, want) {
		t.Fatalf("charts %q, want %q (one per workload and goroutine count)", names, want)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: %v, not a PNG", n, err)
		}
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r, []string{"c/one.png", "c/two.png"}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	one := strings.Index(md, fmt.Sprintf("![evict-uniform, %d goroutines](c/one.png)", procs))
	two := strings.Index(md, fmt.Sprintf("![evict-uniform, %d goroutines](c/two.png)", 2*procs))
	second := strings.Index(md, fmt.Sprintf("### %d goroutines", 2*procs))
	if one < 0 || two < 0 || !(one < second && second < two) {
		t.Errorf("each chart should follow its own table (at %d, %d; second table at %d):\n%s", one, two, second, md)
	}
}
