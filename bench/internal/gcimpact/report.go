package gcimpact

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/chart"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// Report is a run with its circumstances: what gc.json holds.
type Report struct {
	report.Header
	Sizes    []int    `json:"sizes"`
	Template Job      `json:"job"`
	Rounds   int      `json:"rounds"`
	Caches   []Cache  `json:"caches"`
	Results  []Result `json:"results"`
}

// Cache describes a measured cache.
type Cache struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Config string `json:"config"`
}

// Describe returns the descriptions of the named caches.
func Describe(names []string) []Cache {
	var out []Cache
	for _, n := range names {
		info, _ := adapter.LookupString(n)
		out = append(out, Cache{Name: n, Kind: string(info.Kind), Config: info.Config})
	}
	return out
}

// Row is a cache's medians over the rounds at one size.
type Row struct {
	Cache       string
	Entries     int
	Held        int
	HeapMiB     float64
	RSSMiB      float64
	ObjectsM    float64
	FillS       float64 // seconds
	FillMaxMs   float64 // the longest Set of the fill
	ForcedMs    float64 // the fastest forced collection
	ForcedMedMs float64 // the median one
	ForcedCPUms float64 // per forced collection
	ForcedPCPU  float64 // process CPU ms per forced collection (getrusage)
	Window      float64 // seconds
	Cycles      float64
	GCCPUPerSec float64
	MaxPauseUs  float64
	P50us       float64
	P99us       float64
	P999us      float64
	MaxUs       float64
	ChurnPerSec float64
}

// Row returns the medians of a cache's results with the given entries.
func (r *Report) Row(cache string, entries int) (Row, bool) {
	var rs []Result
	for _, res := range r.Results {
		if res.Cache == cache && res.Entries == entries {
			rs = append(rs, res)
		}
	}
	if len(rs) == 0 {
		return Row{}, false
	}
	med := func(f func(Result) float64) float64 {
		var xs []float64
		for _, x := range rs {
			xs = append(xs, f(x))
		}
		return report.Median(xs)
	}
	d := func(t time.Duration) float64 { return float64(t) / float64(time.Microsecond) }
	return Row{
		Cache:       cache,
		Entries:     entries,
		Held:        int(med(func(x Result) float64 { return float64(x.Held) })),
		HeapMiB:     med(func(x Result) float64 { return float64(x.Memory.HeapInuse) / (1 << 20) }),
		RSSMiB:      med(func(x Result) float64 { return float64(x.Memory.RSS) / (1 << 20) }),
		ObjectsM:    med(func(x Result) float64 { return float64(x.Memory.HeapObjects) / 1e6 }),
		FillS:       med(func(x Result) float64 { return x.Fill.Seconds() }),
		FillMaxMs:   med(func(x Result) float64 { return d(x.FillMaxSet) / 1000 }),
		ForcedMs:    med(func(x Result) float64 { return d(x.ForcedMin()) / 1000 }),
		ForcedMedMs: med(func(x Result) float64 { return d(x.ForcedMedian()) / 1000 }),
		ForcedCPUms: med(func(x Result) float64 { return 1000 * x.ForcedCPU / float64(max(len(x.Forced), 1)) }),
		ForcedPCPU:  med(func(x Result) float64 { return d(x.ForcedProcessCPU) / 1000 / float64(max(len(x.Forced), 1)) }),
		Window:      med(func(x Result) float64 { return x.Window.Seconds() }),
		Cycles:      med(func(x Result) float64 { return float64(x.Cycles) }),
		GCCPUPerSec: med(Result.GCCPUPerSecond),
		MaxPauseUs:  med(func(x Result) float64 { return d(x.MaxPause) }),
		P50us:       med(func(x Result) float64 { return d(x.P50) }),
		P99us:       med(func(x Result) float64 { return d(x.P99) }),
		P999us:      med(func(x Result) float64 { return d(x.P999) }),
		MaxUs:       med(func(x Result) float64 { return d(x.MaxLatency) }),
		ChurnPerSec: med(func(x Result) float64 { return float64(x.ChurnSets) / max(x.Window.Seconds(), 1e-9) }),
	}, true
}

// names returns the baseline (measured only when Sizes holds 0) and the
// caches, in report order.
func (r *Report) names() []string {
	var out []string
	if r.hasEmpty() {
		out = append(out, None)
	}
	for _, c := range r.Caches {
		out = append(out, c.Name)
	}
	return out
}

// hasEmpty reports whether Sizes holds 0: whether empty caches and the
// baseline None were measured.
func (r *Report) hasEmpty() bool { return slices.Contains(r.Sizes, 0) }

// SizeLabel names a size in the tables: "empty", "2M", "10M", "500k".
func SizeLabel(n int) string {
	switch {
	case n == 0:
		return "empty"
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return report.Thousands(n)
}

// SummaryTable returns one figure of every cache at every size.
func (r *Report) SummaryTable(what string, f func(Row) string) string {
	cols := []string{"cache"}
	for _, s := range r.Sizes {
		cols = append(cols, ">"+what+", "+SizeLabel(s))
	}
	t := report.NewTable(cols...)
	for _, n := range r.names() {
		row := []string{n}
		any := false
		for _, s := range r.Sizes {
			x, ok := r.Row(n, s)
			if !ok {
				row = append(row, "–")
				continue
			}
			any = true
			row = append(row, f(x))
		}
		if any {
			t.Row(row...)
		}
	}
	return t.String()
}

// DetailTable returns every figure of every cache at one size.
func (r *Report) DetailTable(size int, names []string) string {
	t := report.NewTable("cache", ">entries held", ">fill s", ">slowest Set of the fill ms", ">heap MiB", ">resident MiB", ">heap objects (M)", ">forced GC ms, fastest", ">median", ">GC CPU ms per forced GC", ">process CPU ms per forced GC",
		">churn s", ">GC cycles", ">GC CPU s per s", ">longest STW pause µs", ">request p50 µs", ">p99 µs", ">p99.9 µs", ">max µs")
	if names == nil {
		names = r.names()
	}
	for _, n := range names {
		x, ok := r.Row(n, size)
		if !ok {
			continue
		}
		held := fmt.Sprint(x.Held)
		if n == None {
			held = "–"
		}
		fill := fillText(x.FillS)
		if x.Entries == 0 {
			fill = "–" // an empty cache's Fill is only the wait for its pending writes
		}
		t.Row(n, held, fill, fillText(x.FillMaxMs), f1(x.HeapMiB), f1(x.RSSMiB), fmt.Sprintf("%.2f", x.ObjectsM), fmt.Sprintf("%.2f", x.ForcedMs), fmt.Sprintf("%.2f", x.ForcedMedMs), fmt.Sprintf("%.1f", x.ForcedCPUms), cpuText(x.ForcedPCPU),
			fmt.Sprintf("%.1f", x.Window), fmt.Sprintf("%.0f", x.Cycles), fmt.Sprintf("%.3f", x.GCCPUPerSec), f0(x.MaxPauseUs),
			f1(x.P50us), f1(x.P99us), f1(x.P999us), f0(x.MaxUs))
	}
	return t.String()
}

// fillText formats a figure of the fill, "–" where there was none (no
// cache, or an empty one).
func fillText(x float64) string {
	if x <= 0 {
		return "–"
	}
	return f1(x)
}

// cpuText formats a process CPU time, "–" where it was not measured.
func cpuText(ms float64) string {
	if ms <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", ms)
}

func f0(x float64) string { return fmt.Sprintf("%.0f", x) }
func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

// Charts draws the forced-GC and p99.9 charts of every size (0 as
// "empty"; the baseline, measured at 0 only, has its one figure at every
// size) into dir, named prefix-forced.png and prefix-p999.png, for the
// named caches (all, and the baseline if Sizes holds 0, if nil), and
// returns their names. A figure not measured has no bar.
func (r *Report) Charts(dir, prefix string, names []string) ([]string, error) {
	if names == nil {
		names = r.names()
	}
	forced := chart.Bars{Title: "Duration of a forced GC", Label: "ms, logarithmic (less is better)", Categories: names, Log: true}
	p999 := chart.Bars{Title: "p99.9 latency of an unrelated request loop during churn", Label: "µs, logarithmic (less is better)", Categories: names, Log: true}
	for _, s := range r.Sizes {
		fs := chart.Series{Name: SizeLabel(s) + " entries"}
		ps := chart.Series{Name: SizeLabel(s) + " entries"}
		if s == 0 {
			fs.Name, ps.Name = "empty", "empty"
		}
		for _, n := range names {
			x, ok := r.Row(n, s)
			if !ok && n == None {
				x, ok = r.Row(n, 0) // the baseline has no size
			}
			if !ok {
				fs.Values = append(fs.Values, math.NaN())
				ps.Values = append(ps.Values, math.NaN())
				continue
			}
			fs.Values = append(fs.Values, x.ForcedMs)
			ps.Values = append(ps.Values, x.P999us)
		}
		forced.Series = append(forced.Series, fs)
		p999.Series = append(p999.Series, ps)
	}
	files := []string{prefix + "-forced.png", prefix + "-p999.png"}
	if err := forced.WriteFile(filepath.Join(dir, files[0])); err != nil {
		return nil, err
	}
	if err := p999.WriteFile(filepath.Join(dir, files[1])); err != nil {
		return nil, err
	}
	return files, nil
}

// MethodText describes the experiment, for the documents: the empty
// caches' capacity as Config.Jobs sets it, the keys and the baseline only
// for the sizes measured, and the forced collections as RunJob runs them.
func (r *Report) MethodText() string {
	j := r.Template
	largest := 0 // none in a JSON file without sizes
	if len(r.Sizes) > 0 {
		largest = slices.Max(r.Sizes)
	}
	emptyCap := max(largest, 1) // Config.Jobs
	var fill, forced, churn string
	switch {
	case largest == 0:
		fill = fmt.Sprintf("Each cache is built in a fresh process for %s and left empty.", entriesText(emptyCap))
	case r.hasEmpty():
		fill = fmt.Sprintf("Each cache is built in a fresh process and filled with N entries: keys `key:0` … `key:N−1`, values of %d fresh bytes each "+
			"(\"empty\": built for %s and left empty).", j.ValueBytes, entriesText(emptyCap))
	default:
		fill = fmt.Sprintf("Each cache is built in a fresh process and filled with N entries: keys `key:0` … `key:N−1`, values of %d fresh bytes each.", j.ValueBytes)
	}
	forced = fmt.Sprintf("%d times", j.ForcedGCs)
	if j.ForcedGCs == 1 {
		forced = "once"
	}
	if j.ForcedGCs < maxForced {
		forced += fmt.Sprintf(", or more (up to %d) until they have taken a second", maxForced)
	}
	switch {
	case j.ChurnRate == 0:
		churn = "does nothing (the churn rate is 0)" // churn returns at once
	case largest == 0:
		churn = fmt.Sprintf("allocates fresh %d-byte values at %s per second and drops them (there are no entries to replace)", j.ValueBytes, report.Thousands(j.ChurnRate))
	case r.hasEmpty():
		churn = fmt.Sprintf("replaces the values of random existing keys (%s of them, drawn at random from the whole key space) at %s Sets/s, "+
			"with fresh %d-byte values (without entries it allocates the values and drops them, so the allocation rate is the same)",
			r.churnKeysText(), report.Thousands(j.ChurnRate), j.ValueBytes)
	default:
		churn = fmt.Sprintf("replaces the values of random existing keys (%s of them, drawn at random from the whole key space) at %s Sets/s, "+
			"with fresh %d-byte values", r.churnKeysText(), report.Thousands(j.ChurnRate), j.ValueBytes)
	}
	window := fmt.Sprintf("The window lasts at least %s and until %s finished (at most %s): a heap of millions of objects is collected rarely, and each collection is long.",
		report.ShortDuration(j.MinWindow), collectionsText(j.MinCycles), report.ShortDuration(j.MaxWindow))
	if j.MinCycles == 0 {
		window = fmt.Sprintf("The window lasts %s.", report.ShortDuration(j.MinWindow))
	}
	return fmt.Sprintf("%s Then, with nothing else running:\n\n"+
		"1. **forced GC**: `runtime.GC()` %s; the fastest one's wall-clock duration "+
		"(the one least disturbed by other work: on a busy machine a collection's workers wait for a CPU; the details give the median too), the GC CPU time per collection from `runtime/metrics` "+
		"(`/cpu/classes/gc/total:cpu-seconds`, which counts every P's mark work), and the CPU time the process used per collection (`getrusage`; "+
		"nothing else runs then, and unlike the other two it does not grow when other processes hold the CPUs).\n"+
		"2. **churn**: one goroutine %s, while a second "+
		"goroutine runs an unrelated request loop: %s requests/s, each allocating about 16 KiB in 18 objects (a map of 16 buffers and a response), "+
		"in bursts of a millisecond's worth; each request's latency goes into a histogram (1.6%% resolution). %s "+
		"**GC CPU s per s** is the GC's CPU time over the window divided by its length (on %d Ps, 1.0 would be a whole core); the longest "+
		"stop-the-world pause comes from `/sched/pauses/total/gc:seconds` (to its histogram's bucket).\n\n"+
		"GOGC is left at its default (100), as most programs run.",
		fill, forced, churn, report.Thousands(j.RequestRate), window, r.GOMAXPROCS)
}

// churnKeysText says how many keys the churn of a cache of N entries
// replaces: min(N, 65,536), as churn draws them, over the sizes measured.
func (r *Report) churnKeysText() string {
	const keys = 1 << 16 // churn's bound
	lo, hi := 0, 0       // the smallest and largest size with entries
	for _, s := range r.Sizes {
		if s > 0 {
			if lo == 0 || s < lo {
				lo = s
			}
			hi = max(hi, s)
		}
	}
	switch {
	case lo >= keys:
		return report.Thousands(keys)
	case hi <= keys:
		return "N"
	}
	return "min(N, " + report.Thousands(keys) + ")"
}

// collectionsText says how many collections have finished: "1
// collection has", "3 collections have".
func collectionsText(n int) string {
	if n == 1 {
		return "1 collection has"
	}
	return fmt.Sprintf("%d collections have", n)
}

// OfRuns says over how many runs a figure is the median: "" for one,
// ", median of 3 runs" for more.
func (r *Report) OfRuns() string {
	if r.Rounds <= 1 {
		return ""
	}
	return fmt.Sprintf(", median of %d runs", r.Rounds)
}

// ForcedWhat says what the forced-GC figure of a summary (Row.ForcedMs)
// is: "the fastest collection" of a single run, "the fastest collection
// of each run, median of 3 runs" of more.
func (r *Report) ForcedWhat() string {
	if r.Rounds > 1 {
		return "the fastest collection of each run" + r.OfRuns()
	}
	return "the fastest collection"
}

// Markdown renders gc.md.
func (r *Report) Markdown(charts []string) string {
	var b strings.Builder
	b.WriteString(r.Header.Markdown("GC impact: what a full cache costs the collector", "bench/cmd/gc (make bench BENCH=gc)"))
	b.WriteString(r.MethodText())
	if r.hasEmpty() {
		b.WriteString(" The baseline **none** is the same process without any cache.")
	}
	b.WriteString(" docs/benchmarks/README.md discusses the method.\n\n")
	// Each figure is the median over the runs of one run's figure
	// (Report.Row): the fastest forced collection, the process CPU per
	// collection (the run's total over its collections), the slowest Set.
	fmt.Fprintf(&b, "## Forced GC (ms, %s)\n\n", r.ForcedWhat())
	b.WriteString(r.SummaryTable("ms", func(x Row) string { return fmt.Sprintf("%.2f", x.ForcedMs) }))
	fmt.Fprintf(&b, "## CPU time of a forced GC (ms of process CPU per collection%s)\n\n", r.OfRuns())
	b.WriteString(r.SummaryTable("ms", func(x Row) string { return cpuText(x.ForcedPCPU) }))
	fmt.Fprintf(&b, "## The fill: the slowest Set (ms%s)\n\n", r.OfRuns())
	b.WriteString("One goroutine Sets the N entries; the longest of those Sets, the waits for asynchronous caches aside. " +
		"A cache that grows its index, or its policy's tables, all at once stops the Set that triggers it for as long as that takes. " +
		"The details give the fill's whole time.\n\n")
	b.WriteString(r.SummaryTable("ms", func(x Row) string { return fillText(x.FillMaxMs) }))
	b.WriteString("## Request loop p99.9 during churn (µs)\n\n")
	b.WriteString(r.SummaryTable("µs", func(x Row) string { return f1(x.P999us) }))
	b.WriteString("## GC CPU during churn (CPU seconds per second)\n\n")
	b.WriteString(r.SummaryTable("s/s", func(x Row) string { return fmt.Sprintf("%.3f", x.GCCPUPerSec) }))
	for _, c := range charts {
		fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
	}
	for _, s := range r.Sizes {
		fmt.Fprintf(&b, "## Details: %s\n\n", sizeTitle(s))
		b.WriteString(r.DetailTable(s, nil))
	}
	b.WriteString("## Caches\n\n")
	t := report.NewTable("cache", "configuration")
	for _, c := range r.Caches {
		t.Row(c.Name, c.Config)
	}
	b.WriteString(t.String())
	return b.String()
}

// entriesText says how many entries: "1 entry", "10M entries".
func entriesText(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return SizeLabel(n) + " entries"
}

func sizeTitle(s int) string {
	if s == 0 {
		return "empty caches (and no cache at all)"
	}
	return report.Thousands(s) + " entries"
}
