package articles

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/chart"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// Report is a run and its results: what articles.json holds.
type Report struct {
	report.Header
	Entries    int       `json:"entries"`
	Goroutines int       `json:"goroutines"`
	Duration   string    `json:"duration"`
	Rounds     int       `json:"rounds"`
	WritePcts  []float64 `json:"write_pcts"`
	Caches     []Cache   `json:"caches"`
}

// Cache is one cache's configuration and results, one per round.
type Cache struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Config  string   `json:"config"`
	Results []Result `json:"results"`
}

// Summary is a cache's medians over the rounds.
type Summary struct {
	Cache     string
	Kind      string
	Held      int
	HeapMiB   float64
	RSSMiB    float64
	Objects   float64   // heap objects, millions
	NsPerOp   []float64 // one per Report.WritePcts; NaN: not measured
	NsSpread  []float64 // (max − min) / median of the rounds, per write share; NaN: fewer than 2 rounds
	HitRatios []float64 // of the Gets, per write share
}

// Describe returns the report's cache descriptions.
func Describe(names []string) []Cache {
	var out []Cache
	for _, n := range names {
		info, _ := adapter.LookupString(n)
		out = append(out, Cache{Name: n, Kind: string(info.Kind), Config: info.Config})
	}
	return out
}

// Summaries returns each measured cache's medians, in the report's order.
func (r *Report) Summaries() []Summary {
	var out []Summary
	for _, c := range r.Caches {
		if len(c.Results) == 0 {
			continue
		}
		s := Summary{Cache: c.Name, Kind: c.Kind}
		var held, heap, rss, objs []float64
		for _, res := range c.Results {
			held = append(held, float64(res.Held))
			heap = append(heap, mib(res.Memory.HeapInuse))
			rss = append(rss, mib(res.Memory.RSS))
			objs = append(objs, float64(res.Memory.HeapObjects)/1e6)
		}
		s.Held = int(report.Median(held))
		s.HeapMiB, s.RSSMiB, s.Objects = report.Median(heap), report.Median(rss), report.Median(objs)
		for _, pct := range r.WritePcts {
			var ns, hit []float64
			for _, res := range c.Results {
				for _, p := range res.Phases {
					if p.WritePct == pct && p.Ops > 0 {
						ns = append(ns, p.NsPerOp())
						if p.Gets > 0 {
							hit = append(hit, float64(p.Hits)/float64(p.Gets))
						}
					}
				}
			}
			m := math.NaN() // no phase at this share: missing, not 0
			if len(ns) > 0 {
				m = report.Median(ns)
			}
			s.NsPerOp = append(s.NsPerOp, m)
			spread := math.NaN() // one round has no spread
			if len(ns) > 1 && m > 0 {
				spread = (slices.Max(ns) - slices.Min(ns)) / m
			}
			s.NsSpread = append(s.NsSpread, spread)
			s.HitRatios = append(s.HitRatios, report.Median(hit))
		}
		out = append(out, s)
	}
	return out
}

// Lookup returns the summary of the named cache.
func Lookup(sums []Summary, name string) (Summary, bool) {
	i := slices.IndexFunc(sums, func(s Summary) bool { return s.Cache == name })
	if i < 0 {
		return Summary{}, false
	}
	return sums[i], true
}

// PctLabel formats a write share: "10%", "0.1%".
func PctLabel(p float64) string { return fmt.Sprintf("%g%%", p) }

// Table returns the article's table for the named caches (all if names
// is nil), with ratios to base's figures (none if base is "").
func (r *Report) Table(names []string, base string) string {
	sums := r.Summaries()
	b, hasBase := Lookup(sums, base)
	cols := []string{"cache", "kind", ">entries held", ">heap MiB", ">resident MiB", ">heap objects (M)"}
	for _, p := range r.WritePcts {
		cols = append(cols, ">ns/op, "+PctLabel(p)+" writes")
	}
	t := report.NewTable(cols...)
	for _, s := range sums {
		if names != nil && !slices.Contains(names, s.Cache) {
			continue
		}
		held := fmt.Sprintf("%d", s.Held)
		if s.Held < r.Entries {
			held = fmt.Sprintf("**%d** (%s%% lost)", s.Held, lostText(100*float64(r.Entries-s.Held)/float64(r.Entries)))
		}
		row := []string{s.Cache, s.Kind, held,
			withRatio(s.HeapMiB, b.HeapMiB, hasBase && s.Cache != base, "%.1f"),
			withRatio(s.RSSMiB, b.RSSMiB, hasBase && s.Cache != base, "%.1f"),
			fmt.Sprintf("%.2f", s.Objects)}
		for i := range r.WritePcts {
			var bns float64
			if hasBase {
				bns = b.NsPerOp[i]
			}
			row = append(row, withRatio(s.NsPerOp[i], bns, hasBase && s.Cache != base, "%.1f"))
		}
		t.Row(row...)
	}
	return t.String()
}

func withRatio(v, base float64, show bool, format string) string {
	if math.IsNaN(v) {
		return "–" // not measured
	}
	s := fmt.Sprintf(format, v)
	if show && base > 0 {
		s += " (" + report.Ratio(v, base) + ")"
	}
	return s
}

// lostText formats a share of entries lost, in percent, with one decimal
// or as many more as it takes not to read as none ("0.0001").
func lostText(pct float64) string {
	s := fmt.Sprintf("%.1f", pct)
	for d := 2; d <= 9 && pct > 0 && strings.Trim(s, "0.") == ""; d++ {
		s = strconv.FormatFloat(pct, 'f', d, 64)
	}
	return s
}

// has reports whether the report describes the named cache.
func (r *Report) has(name string) bool {
	return slices.ContainsFunc(r.Caches, func(c Cache) bool { return c.Name == name })
}

// byteCaches returns the names of the report's byte caches, in its order.
func (r *Report) byteCaches() []string {
	var out []string
	for _, c := range r.Caches {
		if c.Kind == string(adapter.KindBytes) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Charts draws the memory and time charts of the named caches (all if
// names is nil) into dir, named prefix-memory.png and prefix-time.png,
// and returns their file names.
func (r *Report) Charts(dir, prefix string, names []string) ([]string, error) {
	var cats []string
	var heap, rss []float64
	ns := make([][]float64, len(r.WritePcts))
	for _, s := range r.Summaries() {
		if names != nil && !slices.Contains(names, s.Cache) {
			continue
		}
		cats = append(cats, s.Cache)
		heap = append(heap, s.HeapMiB)
		rss = append(rss, s.RSSMiB)
		for i := range r.WritePcts {
			ns[i] = append(ns[i], s.NsPerOp[i])
		}
	}
	mem := chart.Bars{
		Title:      fmt.Sprintf("Memory held by %s entries of struct{int; bool; string} after GC", report.Thousands(r.Entries)),
		Label:      "MiB (less is better)",
		Categories: cats,
		Series:     []chart.Series{{Name: "Go heap in use", Values: heap}, {Name: "resident set", Values: rss}},
	}
	tm := chart.Bars{
		Title:      fmt.Sprintf("Time per operation, %d goroutines in parallel", r.Goroutines),
		Label:      "ns/op (less is better)",
		Categories: cats,
	}
	for i, p := range r.WritePcts {
		tm.Series = append(tm.Series, chart.Series{Name: PctLabel(p) + " writes", Values: ns[i]})
	}
	files := []string{prefix + "-memory.png", prefix + "-time.png"}
	if err := mem.WriteFile(filepath.Join(dir, files[0])); err != nil {
		return nil, err
	}
	if err := tm.WriteFile(filepath.Join(dir, files[1])); err != nil {
		return nil, err
	}
	return files, nil
}

// Markdown renders articles.md; charts are the chart files' names
// relative to the document.
func (r *Report) Markdown(charts []string) string {
	var b strings.Builder
	b.WriteString(r.Header.Markdown(fmt.Sprintf("The articles' table: %s structs, memory and parallel time per operation", report.Thousands(r.Entries)),
		"bench/cmd/articles (make bench BENCH=articles)"))
	fmt.Fprintf(&b, "Every cache stores the same %s entries: keys `user:0` … `user:%d`, values `struct{N int; B bool; S string}` "+
		"with a string of %d to %d bytes (`profile-` and a number). %s"+
		"Each cache is measured in a fresh process (%s, caches interleaved, medians shown); "+
		"docs/benchmarks/README.md explains the method.\n\n",
		report.Thousands(r.Entries), r.Entries-1, len(NewValue(0).S), len(NewValue(max(r.Entries-1, 0)).S), byteText(r), report.Count(r.Rounds, "round"))
	b.WriteString("- **entries held**: keys a Get found after the fill (a cache that drops or refuses writes holds fewer).\n")
	b.WriteString("- **heap MiB**: growth of the Go heap in use (`runtime.MemStats.HeapInuse`) from before the cache was built to after the fill, each after a forced GC. " +
		"It misses memory mapped outside the Go heap")
	if r.has("fastcache") {
		b.WriteString(": fastcache's chunks are allocated with mmap")
	}
	b.WriteString(".\n- **resident MiB**: growth of the process's resident set over the same span (after the GC, free pages returned to the OS): " +
		"what the machine really gave the cache, off-heap chunks included.")
	if len(r.byteCaches()) > 0 {
		b.WriteString(" The fair figure for comparing byte caches with the others.")
	}
	b.WriteString("\n")
	b.WriteString("- **heap objects**: growth of the number of live heap objects: what every GC cycle has to mark.\n")
	procs := ""
	if r.Goroutines == r.GOMAXPROCS {
		procs = " (GOMAXPROCS)"
	}
	fmt.Fprintf(&b, "- **ns/op**: wall-clock time per operation with %d goroutines%s reading and writing uniformly random keys of the %s "+
		"for %s per round, as `go test` reports for `b.RunParallel`: elapsed time / operations. A read is a Get, a write a Set of an existing key with a new value.\n\n",
		r.Goroutines, procs, report.Thousands(r.Entries), r.Duration)
	if _, ok := Lookup(r.Summaries(), "cachekit"); ok {
		b.WriteString("In parentheses: the figure as a multiple of cachekit's.\n\n")
	}
	b.WriteString(r.Table(nil, "cachekit"))
	for _, c := range charts {
		fmt.Fprintf(&b, "![%s](%s)\n\n", strings.TrimSuffix(c, ".png"), c)
	}
	b.WriteString("## Spread between rounds\n\n(max − min) / median of the rounds' ns/op: a difference between two caches smaller than this is noise.\n\n")
	cols := []string{"cache"}
	for _, p := range r.WritePcts {
		cols = append(cols, ">"+PctLabel(p)+" writes")
	}
	t := report.NewTable(cols...)
	for _, s := range r.Summaries() {
		row := []string{s.Cache}
		for _, x := range s.NsSpread {
			if math.IsNaN(x) {
				row = append(row, "–") // fewer than 2 rounds: no spread
				continue
			}
			row = append(row, fmt.Sprintf("%.0f%%", 100*x))
		}
		t.Row(row...)
	}
	b.WriteString(t.String())
	b.WriteString("## Caches\n\n")
	ct := report.NewTable("cache", "configuration")
	for _, c := range r.Caches {
		ct.Row(c.Name, c.Config)
	}
	b.WriteString(ct.String())
	var budgeted []string // the byte caches with a budget: all but bigcache
	for _, c := range r.byteCaches() {
		if c != "bigcache" {
			budgeted = append(budgeted, c)
		}
	}
	var notes []string
	sz := report.Thousands(adapter.ByteBudget(r.Entries, EntryBytes(max(r.Entries-1, 0))))
	switch len(budgeted) {
	case 0:
	case 1:
		notes = append(notes, fmt.Sprintf("%s's budget is %s bytes (`adapter.ByteBudget`: entries × (largest entry + 32) × 1.5), enough for every entry; "+
			"how much of it it touches is its own design.", budgeted[0], sz))
	default:
		notes = append(notes, fmt.Sprintf("The byte caches' budget is %s bytes (`adapter.ByteBudget`: entries × (largest entry + 32) × 1.5), enough for every entry; "+
			"how much of it each one touches is its own design.", sz))
	}
	if r.has("bigcache") {
		none := "none"
		if len(budgeted) == 0 {
			none = "no byte budget"
		}
		notes = append(notes, "bigcache gets "+none+" (`HardMaxCacheSize: 0`): its queues grow as it fills.")
	}
	if len(notes) > 0 {
		b.WriteString(strings.Join(notes, " ") + "\n")
	}
	return b.String()
}

// byteText says which of the report's caches store the struct encoded:
// its byte caches, bytecache through its Typed layer; "" without any.
func byteText(r *Report) string {
	var names []string
	typed := false
	for _, c := range r.byteCaches() {
		if c == "bytecache" {
			typed = true
			continue
		}
		names = append(names, c)
	}
	list := strings.Join(names, ", ")
	if typed {
		const bc = "cachekit's bytecache through its `Typed` layer"
		switch {
		case len(names) == 0:
			list = bc
		default:
			list += ", and " + bc
		}
	}
	switch n := len(r.byteCaches()); n {
	case 0:
		return ""
	case 1:
		return "The byte cache (" + list + ") stores the struct binary-encoded (a varint, a byte, a length-prefixed string) " +
			"and decodes it on every Get, as its users must. "
	}
	return "The byte caches (" + list + ") store the struct binary-encoded (a varint, a byte, a length-prefixed string) " +
		"and decode it on every Get, as their users must. "
}
