// Package bytereport writes docs/benchmarks/bytecache.md: cachekit's
// bytecache against bigcache, freecache and fastcache in one run — the
// articles' table for the byte caches (with pure parallel Gets and Sets),
// the GC experiment with 10M entries against an empty cache and a
// map[string][]byte — and checks the targets of the bytecache issue.
package bytereport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// Caches are the byte caches compared, bytecache first.
var Caches = []string{"bytecache", "fastcache", "freecache", "bigcache"}

// GCCaches are the GC experiment's caches: the byte caches and a plain
// map.
var GCCaches = []string{"bytecache", "fastcache", "freecache", "bigcache", "map"}

// WritePcts are the write shares of the timed runs: the article's 10%
// and 0.1%, pure Gets and pure Sets.
var WritePcts = []float64{10, 0.1, 0, 100}

// Report is the whole run: what bytecache.json holds.
type Report struct {
	report.Header
	Articles articles.Report `json:"articles"`
	GC       gcimpact.Report `json:"gc"`
}

// Target is one of the targets with what was measured.
type Target struct {
	What     string
	Measured string
	Met      bool
	Known    bool // false when a figure is missing
}

// Targets evaluates the targets.
func (r *Report) Targets() []Target {
	var out []Target
	sums := r.Articles.Summaries()
	bc, ok1 := articles.Lookup(sums, "bytecache")
	fc, ok2 := articles.Lookup(sums, "fastcache")
	t := Target{What: fmt.Sprintf("memory for %s structs at most fastcache's (resident set)", report.Thousands(r.Articles.Entries))}
	if ok1 && ok2 && bc.RSSMiB > 0 && fc.RSSMiB > 0 { // 0: not measured (no /proc)
		t.Known = true
		t.Met = bc.RSSMiB <= fc.RSSMiB
		t.Measured = fmt.Sprintf("bytecache %.1f MiB, fastcache %.1f MiB (%s)", bc.RSSMiB, fc.RSSMiB, report.Ratio(bc.RSSMiB, fc.RSSMiB))
	}
	out = append(out, t)
	for i, pct := range r.Articles.WritePcts {
		if pct != 10 && pct != 0.1 {
			continue
		}
		t := Target{What: fmt.Sprintf("parallel throughput at %s writes at least fastcache's", articles.PctLabel(pct))}
		if ok1 && ok2 && bc.NsPerOp[i] > 0 && fc.NsPerOp[i] > 0 {
			t.Known = true
			t.Met = bc.NsPerOp[i] <= fc.NsPerOp[i]
			t.Measured = fmt.Sprintf("bytecache %.1f ns/op, fastcache %.1f ns/op: bytecache's throughput is %s fastcache's",
				bc.NsPerOp[i], fc.NsPerOp[i], report.Ratio(fc.NsPerOp[i], bc.NsPerOp[i]))
		}
		out = append(out, t)
	}
	// The largest size's figures against the empty cache's; none without
	// sizes (a JSON file without the GC experiment).
	big, label := r.largestGC(), "the most"
	if big > 0 {
		label = gcimpact.SizeLabel(big)
	}
	full, ok1 := r.GC.Row("bytecache", big)
	empty, ok2 := r.GC.Row("bytecache", 0)
	if big == 0 {
		ok1 = false // no full cache to compare
	}
	t = Target{What: fmt.Sprintf("with %s entries, a forced GC at most 2× as long as with an empty cache", label)}
	if ok1 && ok2 && empty.ForcedMs > 0 {
		t.Known = true
		t.Met = full.ForcedMs <= 2*empty.ForcedMs
		t.Measured = fmt.Sprintf("fastest forced GC %.2f ms full, %.2f ms empty (%s)", full.ForcedMs, empty.ForcedMs, report.Ratio(full.ForcedMs, empty.ForcedMs))
		if none, ok := r.GC.Row(gcimpact.None, 0); ok && none.ForcedMs > 0 {
			t.Measured += fmt.Sprintf("; %.2f ms without any cache (%s)", none.ForcedMs, report.Ratio(full.ForcedMs, none.ForcedMs))
		}
	}
	out = append(out, t)
	// The same by the process's CPU time per forced GC, which other work
	// on the machine does not inflate: sub-millisecond collections are at
	// the mercy of the scheduler's wake-ups on a busy machine.
	t = Target{What: fmt.Sprintf("the same, by process CPU time per forced GC (%s entries against empty)", label)}
	if ok1 && ok2 && empty.ForcedPCPU > 0 {
		t.Known = true
		t.Met = full.ForcedPCPU <= 2*empty.ForcedPCPU
		t.Measured = fmt.Sprintf("%.2f ms full, %.2f ms empty (%s)", full.ForcedPCPU, empty.ForcedPCPU, report.Ratio(full.ForcedPCPU, empty.ForcedPCPU))
		if none, ok := r.GC.Row(gcimpact.None, 0); ok && none.ForcedPCPU > 0 {
			t.Measured += fmt.Sprintf("; %.2f ms without any cache (%s)", none.ForcedPCPU, report.Ratio(full.ForcedPCPU, none.ForcedPCPU))
		}
	}
	out = append(out, t)
	return out
}

// largestGC returns the GC experiment's largest size, 0 without sizes (a
// JSON file without the experiment).
func (r *Report) largestGC() int {
	if len(r.GC.Sizes) == 0 {
		return 0
	}
	return slices.Max(r.GC.Sizes)
}

// Markdown renders bytecache.md; charts are the charts' file names.
func (r *Report) Markdown(charts []string) string {
	var b strings.Builder
	b.WriteString(r.Header.Markdown("bytecache against bigcache, freecache and fastcache", "bench/cmd/bytecache (make bench BENCH=bytecache)"))
	gcText := "the GC experiment"
	if big := r.largestGC(); big > 0 {
		gcText += " with " + report.Thousands(big) + " entries"
	}
	fmt.Fprintf(&b, "cachekit's GC-free byte cache and its three peers, side by side in one run: the articles' table "+
		"(memory of %s encoded structs and parallel ns/op), pure parallel Gets and Sets, and %s. "+
		"articles.md and gc.md have the same measurements for every cache; docs/benchmarks/README.md explains the method.\n\n",
		report.Thousands(r.Articles.Entries), gcText)
	b.WriteString("## Targets\n\n")
	t := report.NewTable("target (bytecache issue)", "measured", "met")
	for _, x := range r.Targets() {
		met := "**missed**"
		switch {
		case !x.Known:
			met, x.Measured = "not measured", "–"
		case x.Met:
			met = "yes"
		}
		t.Row(x.What, x.Measured, met)
	}
	b.WriteString(t.String())

	a := &r.Articles
	fmt.Fprintf(&b, "## The articles' table\n\n%s entries of `struct{N int; B bool; S string}` binary-encoded (a varint, a byte, a length-prefixed string), "+
		"keys `user:0` … `user:%d`; bytecache through its `Typed` layer, the others through the same codec. Each cache in a fresh process, %s, medians; "+
		"%s for %s per timed run, uniformly random keys.%s "+
		"**resident MiB** is the fair memory figure: fastcache's and bytecache's chunks are mapped outside the Go heap.\n\n",
		report.Thousands(a.Entries), a.Entries-1, report.Count(a.Rounds, "round"), report.Count(a.Goroutines, "goroutine"), a.Duration, pureText(a))
	b.WriteString(a.Table(nil, "bytecache"))
	for _, c := range charts {
		if strings.Contains(c, "-gc-") {
			continue
		}
		fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
	}

	g := &r.GC
	big := r.largestGC()
	if big > 0 {
		fmt.Fprintf(&b, "## The GC experiment: %s entries\n\n", report.Thousands(big))
	} else {
		b.WriteString("## The GC experiment\n\n")
	}
	b.WriteString(g.MethodText())
	b.WriteString(" **none** is the same process without any cache; **map** a plain `map[string][]byte` holding the same entries.\n\n")
	rows := append([]string{gcimpact.None}, GCCaches...)
	fmt.Fprintf(&b, "Forced GC, ms (%s):\n\n", g.ForcedWhat())
	b.WriteString(g.SummaryTable("ms", func(x gcimpact.Row) string { return fmt.Sprintf("%.2f", x.ForcedMs) }))
	fmt.Fprintf(&b, "CPU time of a forced GC, ms of process CPU per collection%s:\n\n", g.OfRuns())
	b.WriteString(g.SummaryTable("ms", func(x gcimpact.Row) string { return fmt.Sprintf("%.1f", x.ForcedPCPU) }))
	b.WriteString("Request loop p99.9 during churn, µs:\n\n")
	b.WriteString(g.SummaryTable("µs", func(x gcimpact.Row) string { return fmt.Sprintf("%.1f", x.P999us) }))
	b.WriteString("GC CPU during churn, CPU seconds per second:\n\n")
	b.WriteString(g.SummaryTable("s/s", func(x gcimpact.Row) string { return fmt.Sprintf("%.3f", x.GCCPUPerSec) }))
	for _, c := range charts {
		if strings.Contains(c, "-gc-") {
			fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
		}
	}
	for _, s := range g.Sizes {
		fmt.Fprintf(&b, "### Details: %s\n\n", gcimpact.SizeLabel(s))
		b.WriteString(g.DetailTable(s, rows))
	}

	b.WriteString("## Go benchmarks\n\nThe same timed loop as Go benchmarks (`b.RunParallel`, `ops/s` by `b.ReportMetric`), for benchstat:\n\n")
	b.WriteString("```sh\ncd bench\ngo test -run '^$' -bench 'Articles/cache=(bytecache|fastcache|freecache|bigcache)/' -count 10 | tee new.txt\n" +
		"benchstat -col /cache new.txt          # caches side by side\nbenchstat old.txt new.txt              # a change of bytecache\n```\n\n")
	b.WriteString("## Caches\n\n")
	ct := report.NewTable("cache", "configuration")
	for _, c := range a.Caches {
		ct.Row(c.Name, c.Config)
	}
	b.WriteString(ct.String())
	return b.String()
}

// pureText says what the pure write shares are, for those the report
// has, and what the parentheses hold, if bytecache was measured.
func pureText(a *articles.Report) string {
	var s string
	gets, sets := slices.Contains(a.WritePcts, 0), slices.Contains(a.WritePcts, 100)
	switch {
	case gets && sets:
		s = " **0% writes** is pure parallel Gets, **100%** pure parallel Sets (of existing keys)."
	case gets:
		s = " **0% writes** is pure parallel Gets."
	case sets:
		s = " **100% writes** is pure parallel Sets (of existing keys)."
	}
	if _, ok := articles.Lookup(a.Summaries(), "bytecache"); ok {
		s += " In parentheses: as a multiple of bytecache's."
	}
	return s
}
