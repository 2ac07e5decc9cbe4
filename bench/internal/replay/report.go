package replay

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/chart"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// Report is a run with its circumstances: what replay.json holds.
type Report struct {
	report.Header
	Dir        string      `json:"traces_dir"`
	Rounds     int         `json:"rounds"`
	Goroutines []int       `json:"goroutines"`
	Traces     []TraceInfo `json:"traces"`
	Caches     []string    `json:"caches"`
	Configs    []string    `json:"configs"`
	Results    []Result    `json:"results"`
}

// Cell is a cache's medians on a trace with a goroutine count.
type Cell struct {
	HitRatio, ReadNs, WriteNs, PerSec float64
}

// Cell returns the medians of the results of cache on t (a trace at a
// capacity) with g goroutines.
func (r *Report) Cell(t Trace, cache string, g int) (Cell, bool) {
	var hit, rd, wr, ps []float64
	for _, x := range r.Results {
		if x.Trace == t.Name && x.Capacity == t.Capacity && x.Cache == cache && x.Goroutines == g {
			hit = append(hit, x.HitRatio())
			rd = append(rd, x.ReadNs())
			wr = append(wr, x.WriteNs())
			ps = append(ps, x.PerSec())
		}
	}
	if len(hit) == 0 {
		return Cell{}, false
	}
	return Cell{report.Median(hit), report.Median(rd), report.Median(wr), report.Median(ps)}, true
}

// Table returns the table of t (a trace at a capacity) with g goroutines,
// ratios to cachekit's times.
func (r *Report) Table(trace Trace, g int) string {
	t := report.NewTable("cache", ">hit %", ">read ns/op", ">write ns/op", ">M requests/s")
	base, hasBase := r.Cell(trace, "cachekit", g)
	for _, c := range r.Caches {
		x, ok := r.Cell(trace, c, g)
		if !ok {
			continue
		}
		rd, wr, ps := fmt.Sprintf("%.1f", x.ReadNs), fmt.Sprintf("%.1f", x.WriteNs), fmt.Sprintf("%.2f", x.PerSec/1e6)
		if hasBase && c != "cachekit" {
			rd += " (" + report.Ratio(x.ReadNs, base.ReadNs) + ")"
			wr += " (" + report.Ratio(x.WriteNs, base.WriteNs) + ")"
			ps += " (" + report.Ratio(x.PerSec, base.PerSec) + ")"
		}
		t.Row(c, fmt.Sprintf("%.2f", 100*x.HitRatio), rd, wr, ps)
	}
	return t.String()
}

// MostGoroutines returns the largest goroutine count, that of the chart
// and of the command's tables, and false if the report has none (a JSON
// file without them).
func (r *Report) MostGoroutines() (int, bool) {
	if len(r.Goroutines) == 0 {
		return 0, false
	}
	return slices.Max(r.Goroutines), true
}

// Chart draws the requests per second of every cache on every trace with
// the most goroutines to dir/replay.png and returns the file's name.
func (r *Report) Chart(dir string) (string, error) {
	g, ok := r.MostGoroutines()
	if !ok {
		return "", fmt.Errorf("replay: no goroutine counts to chart")
	}
	ch := r.bars(g)
	name := "replay.png"
	return name, ch.WriteFile(filepath.Join(dir, name))
}

// bars returns the chart of Chart, with g goroutines. A cache not
// replayed on a trace has no bar there (NaN), not a bar of 0.
func (r *Report) bars(g int) chart.Bars {
	ch := chart.Bars{Title: fmt.Sprintf("Trace replay with %d goroutine%s: requests per second", g, report.Plural(g)), Label: "millions of requests per second (more is better)",
		Categories: slices.Clone(r.Caches)}
	for _, tr := range r.Traces {
		s := chart.Series{Name: fmt.Sprintf("%s @%d", tr.Name, tr.Capacity)}
		for _, c := range r.Caches {
			v := math.NaN()
			if x, ok := r.Cell(tr.Trace, c, g); ok {
				v = x.PerSec / 1e6
			}
			s.Values = append(s.Values, v)
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// measured reports whether some cache of the report was replayed on t
// with g goroutines.
func (r *Report) measured(t Trace, g int) bool {
	return slices.ContainsFunc(r.Caches, func(c string) bool {
		_, ok := r.Cell(t, c, g)
		return ok
	})
}

// Markdown renders replay.md.
func (r *Report) Markdown(chartFile string) string {
	var b strings.Builder
	b.WriteString(r.Header.Markdown("Concurrent replay of real traces", "bench/cmd/replay (make bench BENCH=replay)"))
	fmt.Fprintf(&b, "The method of the talk \"Building a Highly Concurrent Cache in Go\": N goroutines replay a trace together, taking batches of %d consecutive "+
		"requests from a shared cursor; for each batch a goroutine Gets every key, then Sets the keys that missed. Each trace is replayed once per run, "+
		"from an empty cache, through a fresh cache (%d round%s, caches interleaved, medians). Trace keys are scrambled by SplitMix64's finaliser, the same for every cache. "+
		"As in the talk's batched lookups, a key that appears twice in one batch misses twice while it is absent.\n\n", Batch, r.Rounds, report.Plural(r.Rounds))
	b.WriteString("- **hit %**: the share of Gets that hit. A concurrent replay can hit less than the single-threaded one of hit-ratio.md: " +
		"goroutines miss the same key at once, and caches drop buffered reads or writes under contention.\n")
	b.WriteString("- **read ns/op**, **write ns/op**: the time a goroutine spent in Get per Get and in Set per Set (each batch's Gets timed together, its Sets together; " +
		"as the talk's read-ns/op and write-ns/op). With more goroutines than cores this includes the time a goroutine waited for a core.\n")
	b.WriteString("- **M requests/s**: requests replayed per second of wall-clock time, all goroutines together.\n\n")
	// The tables give ratios to cachekit's figures only when it was replayed.
	var notes []string
	if slices.Contains(r.Caches, "cachekit") {
		notes = append(notes, "In parentheses: the figure as a multiple of cachekit's.")
	}
	if slices.Contains(r.Caches, "xsync") {
		notes = append(notes, "The unbounded `xsync` map is the reference: its hit ratio is that of an infinite cache, its speed that of a concurrent map.")
	}
	if len(notes) > 0 {
		b.WriteString(strings.Join(notes, " ") + "\n\n")
	}
	tr := report.NewTable("trace", "capacity", ">requests", ">distinct keys")
	for _, t := range r.Traces {
		tr.Row(t.Name, report.Thousands(t.Capacity), report.Thousands(t.Requests), report.Thousands(t.Unique))
	}
	b.WriteString(tr.String())
	if chartFile != "" {
		fmt.Fprintf(&b, "![requests per second](%s)\n\n", chartFile)
	}
	for _, t := range r.Traces {
		fmt.Fprintf(&b, "## %s @%s\n\n", t.Name, report.Thousands(t.Capacity))
		// A goroutine count with no result on the trace (not measured, or
		// not in the JSON file) gets no heading over an empty table.
		measured := false
		for _, g := range r.Goroutines {
			if !r.measured(t.Trace, g) {
				continue
			}
			measured = true
			fmt.Fprintf(&b, "### %d goroutine%s\n\n", g, report.Plural(g))
			b.WriteString(r.Table(t.Trace, g))
		}
		if !measured {
			b.WriteString("No cache was replayed on this trace.\n\n")
		}
	}
	b.WriteString("## Caches\n\n")
	ct := report.NewTable("cache", "configuration")
	for i, c := range r.Caches {
		config := "–" // not in the JSON file
		if i < len(r.Configs) {
			config = r.Configs[i]
		}
		ct.Row(c, config)
	}
	b.WriteString(ct.String())
	return b.String()
}
