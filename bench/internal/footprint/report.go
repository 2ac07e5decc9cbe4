package footprint

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

// Report is a run with its circumstances: what memory.json holds.
type Report struct {
	report.Header
	Sizes  []int  `json:"sizes"`
	TTL    string `json:"ttl"`
	Rounds int    `json:"rounds"`
	Churn  int    `json:"churn,omitempty"` // see Config.Churn
	// MinTotal is Config.MinTotal: sizes below it were measured as
	// several caches together.
	MinTotal int      `json:"min_total,omitempty"`
	Caches   []string `json:"caches"`
	Configs  []string `json:"configs"`
	Results  []Result `json:"results"`
}

// Cell is a cache's medians at one size.
type Cell struct {
	Held        int
	HeapPerEnt  float64 // bytes
	RSSPerEnt   float64
	HeapOverhd  float64 // HeapPerEnt − PairBytes
	RSSOverhd   float64
	ObjectsPerE float64
}

// Cell returns the medians of a cache's results at a size, after the
// fill.
func (r *Report) Cell(cache string, size int) (Cell, bool) { return r.cell(cache, size, 0) }

// ChurnCell returns them after the churn (Config.Churn).
func (r *Report) ChurnCell(cache string, size int) (Cell, bool) { return r.cell(cache, size, r.Churn) }

func (r *Report) cell(cache string, size, churn int) (Cell, bool) {
	var held, heap, rss, objs []float64
	for _, x := range r.Results {
		if x.Cache == cache && x.Entries == size && x.Churn == churn {
			held = append(held, float64(x.Held))
			heap = append(heap, x.HeapPerEntry())
			rss = append(rss, x.RSSPerEntry())
			objs = append(objs, x.ObjectsPerEntry())
		}
	}
	if len(heap) == 0 {
		return Cell{}, false
	}
	c := Cell{Held: int(report.Median(held)), HeapPerEnt: report.Median(heap), RSSPerEnt: report.Median(rss), ObjectsPerE: report.Median(objs)}
	c.HeapOverhd = c.HeapPerEnt - PairBytes
	c.RSSOverhd = c.RSSPerEnt - PairBytes
	return c, true
}

// table returns f of every cell of the given caches, with ratios to
// base's.
func (r *Report) table(caches []string, cell func(string, int) (Cell, bool), f func(Cell) float64, base string) string {
	cols := []string{"cache"}
	for _, s := range r.Sizes {
		cols = append(cols, ">"+sizeLabel(s))
	}
	t := report.NewTable(cols...)
	for _, c := range caches {
		row := []string{c}
		for _, s := range r.Sizes {
			x, ok := cell(c, s)
			if !ok {
				row = append(row, "–")
				continue
			}
			v := bytesText(f(x))
			if b, ok := cell(base, s); ok && c != base && f(b) > 0 && f(x) >= 0 {
				v += " (" + report.Ratio(f(x), f(b)) + ")"
			}
			if x.Held < s {
				v += fmt.Sprintf(" [holds %d]", x.Held)
			}
			row = append(row, v)
		}
		t.Row(row...)
	}
	return t.String()
}

// cachesOf returns the report's caches of the given kinds.
func (r *Report) cachesOf(kinds ...adapter.StringKind) []string {
	var out []string
	for _, c := range r.Caches {
		if info, _ := adapter.LookupString(c); slices.Contains(kinds, info.Kind) {
			out = append(out, c)
		}
	}
	return out
}

func heapOverhead(c Cell) float64 { return c.HeapOverhd }

// bytesText formats a figure in whole bytes, "0" rather than "-0" for
// one between −0.5 and 0.
func bytesText(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	if s == "-0" {
		s = "0"
	}
	return s
}

// ran returns those of names that the report's caches include, in the
// order of names.
func (r *Report) ran(names ...string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(r.Caches, n) {
			out = append(out, n)
		}
	}
	return out
}

// hasResults reports whether the cache has any result.
func (r *Report) hasResults(cache string) bool {
	return slices.ContainsFunc(r.Results, func(x Result) bool { return x.Cache == cache })
}

// churnAlwaysHigher reports whether every cell of the churn table is
// above the same cache's cell at the same size after the fill.
func (r *Report) churnAlwaysHigher() bool {
	n := 0
	for _, c := range r.cachesOf(adapter.KindCache) {
		for _, s := range r.Sizes {
			fill, ok1 := r.Cell(c, s)
			churn, ok2 := r.ChurnCell(c, s)
			if !ok1 || !ok2 {
				continue
			}
			if churn.HeapOverhd <= fill.HeapOverhd {
				return false
			}
			n++
		}
	}
	return n > 0
}

func sizeLabel(n int) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM entries", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk entries", n/1000)
	}
	return report.Thousands(n) + " entries"
}

// HeapTable returns the heap overhead per entry of the caches of Go
// values, with ratios to cachekit.
func (r *Report) HeapTable() string {
	return r.table(r.cachesOf(adapter.KindCache, adapter.KindMap), r.Cell, heapOverhead, "cachekit")
}

// ChurnTable returns the heap overhead per entry after the churn, of the
// bounded caches of Go values, with ratios to cachekit; "" if there was
// no churn.
func (r *Report) ChurnTable() string {
	if r.Churn == 0 {
		return ""
	}
	return r.table(r.cachesOf(adapter.KindCache), r.ChurnCell, heapOverhead, "cachekit")
}

// RSSTable returns the resident overhead per entry, with ratios to
// cachekit.
func (r *Report) RSSTable() string {
	return r.table(r.Caches, r.Cell, func(c Cell) float64 { return c.RSSOverhd }, "cachekit")
}

// Chart draws the heap overhead per entry against the size, to
// dir/memory.png, for the caches of Go values (and the resident figure
// for the byte caches), and returns the file's name.
func (r *Report) Chart(dir string) (string, error) {
	title := "Memory per entry beyond its 32 bytes of key and value, TTL set"
	if !hasTTL(r.TTL) {
		title = "Memory per entry beyond its 32 bytes of key and value, no TTL"
	}
	l := chart.Lines{Title: title,
		XLabel: "entries (log scale)", YLabel: "bytes per entry (less is better; above 400: tables)", LogX: true, YMax: 400}
	for _, s := range r.Sizes {
		l.X = append(l.X, float64(s))
	}
	for _, c := range r.Caches {
		info, _ := adapter.LookupString(c)
		name := c + " (heap)"
		f := heapOverhead
		if info.Kind == adapter.KindBytes {
			name = c + " (resident)"
			f = func(x Cell) float64 { return x.RSSOverhd }
		}
		s := chart.Series{Name: name}
		for _, size := range r.Sizes {
			x, ok := r.Cell(c, size)
			if !ok {
				s.Values = append(s.Values, math.NaN())
				continue
			}
			s.Values = append(s.Values, f(x))
		}
		l.Series = append(l.Series, s)
	}
	name := "memory.png"
	return name, l.WriteFile(filepath.Join(dir, name))
}

// Markdown renders memory.md.
func (r *Report) Markdown(chartFile string) string {
	var b strings.Builder
	b.WriteString(r.Header.Markdown("Memory per entry", "bench/cmd/memory (make bench BENCH=memory)"))
	fmt.Fprintf(&b, "Each cache is built in a fresh process for N entries, %s, and filled with N entries "+
		"whose keys and values are pre-generated 16-byte strings (`key-000000000042`, `val-000000000042`), as otter's memory benchmark does. "+
		"The figures are the growth of memory from before the cache was built to after the fill, each after a forced GC, divided by N, "+
		"**minus the %d bytes of the key and value themselves** (for a cache of Go values, the two string headers it stores; the strings' bytes are shared "+
		"with the benchmark's arrays, which exist before and after; for a byte cache, the 32 bytes it copies). Medians of %s. "+
		"A figure in brackets is the number of entries the cache actually held, when it held fewer than N.\n\n",
		ttlPhrase(r.TTL), PairBytes, report.Count(r.Rounds, "round"))
	if r.MinTotal > 0 && slices.ContainsFunc(r.Sizes, func(s int) bool { return s < r.MinTotal }) {
		fmt.Fprintf(&b, "At sizes below %d entries, each process builds and fills ⌈%d / N⌉ caches of N entries, one after the other, and the growth is divided "+
			"by all their entries: the heap grows by whole 8 kB pages and the allocator's spans fill unevenly, so a single cache of 1,000 entries is "+
			"measured only to within about 8 bytes per entry (one page), and two runs of the same code differed by that much. "+
			"What each cache allocates once per process rather than per instance, if anything, is shared among them.\n\n", r.MinTotal, r.MinTotal)
	}
	b.WriteString("## Go heap in use (`runtime.MemStats.HeapInuse`), bytes per entry\n\n")
	b.WriteString("The measure otter publishes, for the caches of Go values.")
	if len(r.cachesOf(adapter.KindBytes)) > 0 {
		b.WriteString(" It does not see memory mapped outside the Go heap")
		if off := r.ran("fastcache", "bytecache"); len(off) > 0 {
			b.WriteString(" (" + strings.Join(off, "'s and ") + "'s chunks)")
		}
		b.WriteString(", so the byte caches are only in the resident-set table below.")
	}
	if r.hasResults("cachekit") {
		b.WriteString(" In parentheses: as a multiple of cachekit's.")
	}
	b.WriteString("\n\n")
	b.WriteString(r.HeapTable())
	if r.Churn > 0 {
		b.WriteString("## Go heap in use after churn, bytes per entry\n\n")
		fmt.Fprintf(&b, "The same, for the bounded caches of Go values, measured instead after a further %d × N pairs that were never set before, "+
			"each set and then read once (so that a frequency-based admission takes it in, as it would a key requested again): the steady state "+
			"of a full cache whose contents keep changing. Every pair was generated before the first measurement, so none of their bytes count. "+
			"Freed entries leave holes in the heap's spans that a forced GC does not return, %s. "+
			"A figure in brackets is the number of entries held at the end, when fewer than N.\n\n", r.Churn, churnEffect(r.churnAlwaysHigher()))
		b.WriteString(r.ChurnTable())
	}
	b.WriteString("## Resident set, bytes per entry\n\n")
	b.WriteString("Growth of the process's resident set (after the GC, free pages returned to the OS): every kind of memory, off-heap chunks included, " +
		"in whole pages, so small caches are charged for pages they touched but did not fill.\n\n")
	b.WriteString(r.RSSTable())
	if chartFile != "" {
		fmt.Fprintf(&b, "![memory per entry](%s)\n\n", chartFile)
	}
	b.WriteString("## Caches\n\n")
	t := report.NewTable("cache", "configuration")
	for i, c := range r.Caches {
		config := "–" // not in the JSON file
		if i < len(r.Configs) {
			config = r.Configs[i]
		}
		t.Row(c, config)
	}
	b.WriteString(t.String())
	var notes []string
	if budgeted := r.ran("freecache", "fastcache", "bytecache"); len(budgeted) > 0 {
		verb := "get"
		if len(budgeted) == 1 {
			verb = "gets"
		}
		n := fmt.Sprintf("%s %s a budget of N × (%d + 32) × 1.5 bytes (`adapter.ByteBudget`), enough for every entry", report.JoinAnd(budgeted), verb, PairBytes)
		switch fast, free := slices.Contains(budgeted, "fastcache"), slices.Contains(budgeted, "freecache"); {
		case fast && free:
			n += "; fastcache rounds it up to its minimum of 32 MiB, freecache to its minimum of 512 KiB"
		case fast:
			n += "; fastcache rounds it up to its minimum of 32 MiB"
		case free:
			n += "; freecache rounds it up to its minimum of 512 KiB"
		}
		notes = append(notes, n+".")
	}
	if slices.Contains(r.Caches, "bigcache") {
		notes = append(notes, "bigcache has no byte bound (`HardMaxCacheSize: 0`): its queues grow as it fills.")
	}
	if slices.Contains(r.Caches, "map") {
		notes = append(notes, "`map` is a plain `map[string]string` without a TTL: the floor for storing the pairs in a Go map.")
	}
	if slices.Contains(r.Caches, "ristretto") {
		notes = append(notes, "ristretto stores two hashes instead of the key.")
	}
	if len(notes) > 0 {
		b.WriteString(strings.Join(notes, " ") + "\n")
	}
	return b.String()
}

// churnEffect says what the holes do to the churn figures: that they
// are higher, when every one measured is.
func churnEffect(higher bool) string {
	if higher {
		return "so these figures are higher than those after the fill"
	}
	return "which can make these figures higher than those after the fill (they are not all higher in this run)"
}

// ttlPhrase says what TTL the entries were given: -ttl 0 sets none (the
// adapters set a TTL only when it is positive).
func ttlPhrase(s string) string {
	if !hasTTL(s) {
		return "without a TTL"
	}
	return "with a TTL of " + ttlText(s) + " on every entry (where the cache has TTLs)"
}

// hasTTL reports whether s, a report's TTL, is a positive duration.
func hasTTL(s string) bool {
	d, err := time.ParseDuration(s)
	return err != nil || d > 0 // unparsable: shown as it is
}

// ttlText shortens a stored duration ("1h0m0s" → "1h").
func ttlText(s string) string {
	if d, err := time.ParseDuration(s); err == nil {
		return report.ShortDuration(d)
	}
	return s
}
