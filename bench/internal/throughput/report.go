package throughput

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/chart"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

// Baseline is the cache every other cache is compared with.
const Baseline = "cachekit"

// Report is a whole measurement with its circumstances: what the JSON file
// holds and what the Markdown file shows.
type Report struct {
	Command    string   `json:"command"`
	Date       string   `json:"date"`
	GoVersion  string   `json:"go_version"`
	OS         string   `json:"os"`
	Arch       string   `json:"arch"`
	CPU        string   `json:"cpu"`
	Cores      int      `json:"cores"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	Revision   string   `json:"revision,omitempty"`
	Modules    []Module `json:"modules,omitempty"`
	LoadBefore string   `json:"load_before,omitempty"`
	LoadAfter  string   `json:"load_after,omitempty"`
	Note       string   `json:"note,omitempty"`
	Rounds     int      `json:"rounds"`
	Duration   string   `json:"duration"`
	Mults      []int    `json:"goroutine_multipliers"`

	Caches    []CacheInfo    `json:"caches"`
	Workloads []WorkloadInfo `json:"workloads"`
	Results   []Result       `json:"results"`
}

// SetNote sets the report's note (cli.Output.Load, for a document drawn
// again from JSON with a new -note), and the -note of its command.
func (r *Report) SetNote(note string) {
	r.Note = note
	r.Command = report.CommandWithNote(r.Command, note)
}

// Module is a dependency and its version.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// CacheInfo describes a measured cache.
type CacheInfo struct {
	Name    string `json:"name"`
	Bounded bool   `json:"bounded"`
	Config  string `json:"config"`
}

// WorkloadInfo describes a measured workload.
type WorkloadInfo struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Capacity     int    `json:"capacity"`
	KeySpace     int    `json:"key_space"`
	StreamLen    int    `json:"stream_len"`
	DistinctKeys int    `json:"distinct_keys"`
	SetOnMiss    bool   `json:"set_on_miss"`
	ReadPcts     []int  `json:"read_pcts"`
}

// Result is one cache's figures in one cell.
type Result struct {
	Workload   string `json:"workload"`
	ReadPct    int    `json:"read_pct"`
	Goroutines int    `json:"goroutines"`
	Cache      string `json:"cache"`
	// OpsPerSec has one figure per round, in round order.
	OpsPerSec       []float64 `json:"ops_per_sec"`
	MedianOpsPerSec float64   `json:"median_ops_per_sec"`
	// RatioToBaseline is the cache's throughput over cachekit's in the same
	// cell: the median over the rounds of the ratio within each round (see
	// SetRatios); absent when cachekit was not measured.
	RatioToBaseline *float64 `json:"ratio_to_cachekit,omitempty"`
	// HitRatio has one figure per round: the share of Gets that hit.
	HitRatio       []float64 `json:"hit_ratio,omitempty"`
	MedianHitRatio *float64  `json:"median_hit_ratio,omitempty"`
	// SlowestShare has one figure per round: the operations of the
	// goroutine that did fewest, over the mean per goroutine.
	SlowestShare       []float64 `json:"slowest_goroutine_share,omitempty"`
	MedianSlowestShare *float64  `json:"median_slowest_goroutine_share,omitempty"`
}

// DescribeCaches returns the reports' descriptions of caches.
func DescribeCaches(caches []adapter.Info) []CacheInfo {
	out := make([]CacheInfo, len(caches))
	for i, c := range caches {
		out[i] = CacheInfo{Name: c.Name, Bounded: c.Bounded, Config: c.Config}
	}
	return out
}

// DescribeWorkloads returns the reports' descriptions of workloads.
func DescribeWorkloads(ws []*workload.Workload) []WorkloadInfo {
	out := make([]WorkloadInfo, len(ws))
	for i, w := range ws {
		out[i] = WorkloadInfo{
			Name:         w.Name,
			Description:  w.Description,
			Capacity:     w.Capacity,
			KeySpace:     w.KeySpace,
			StreamLen:    len(w.Keys),
			DistinctKeys: w.Distinct(),
			SetOnMiss:    w.SetOnMiss,
			ReadPcts:     slices.Clone(w.ReadPcts),
		}
	}
	return out
}

// Results turns measurements into results: medians, and ratios to
// cachekit in the same cell (SetRatios).
func Results(ms []Measurement) []Result {
	out := make([]Result, len(ms))
	for i, m := range ms {
		r := Result{Workload: m.Workload, ReadPct: m.ReadPct, Goroutines: m.Goroutines, Cache: m.Cache}
		for _, s := range m.Samples {
			r.OpsPerSec = append(r.OpsPerSec, s.OpsPerSec())
			if h, ok := s.HitRatio(); ok {
				r.HitRatio = append(r.HitRatio, h)
			}
			if x, ok := s.SlowestShare(); ok {
				r.SlowestShare = append(r.SlowestShare, x)
			}
		}
		if len(r.OpsPerSec) > 0 {
			r.MedianOpsPerSec = median(r.OpsPerSec)
		}
		if len(r.HitRatio) > 0 {
			h := median(r.HitRatio)
			r.MedianHitRatio = &h
		}
		if len(r.SlowestShare) > 0 {
			x := median(r.SlowestShare)
			r.MedianSlowestShare = &x
		}
		out[i] = r
	}
	SetRatios(out)
	return out
}

// SetRatios sets every result's RatioToBaseline from the figures of each
// round: the median over the rounds of the cache's throughput divided by
// cachekit's in the same cell and round, which ran within seconds of each
// other. The machine's speed drifts between rounds, and on some hosts
// jumps: on the 2-core machine of 2026-11-29, every cache of a getput
// cell with writes ran about twice as fast in some rounds as in others,
// and a ratio of the two medians (the ratio set before; it is still the
// one used when the rounds do not pair up) could divide a fast round's
// figure by a slow round's (xsync 2.18× cachekit where the rounds'
// ratios were 0.85× to 1.09× but for one). Results without cachekit in
// their cell get no ratio.
func SetRatios(rs []Result) {
	base := map[Cell]*Result{}
	for i := range rs {
		if rs[i].Cache == Baseline {
			base[Cell{rs[i].Workload, rs[i].ReadPct, rs[i].Goroutines}] = &rs[i]
		}
	}
	for i := range rs {
		r := &rs[i]
		r.RatioToBaseline = nil
		b := base[Cell{r.Workload, r.ReadPct, r.Goroutines}]
		if b == nil || b.MedianOpsPerSec <= 0 {
			continue
		}
		x := r.MedianOpsPerSec / b.MedianOpsPerSec
		if n := len(r.OpsPerSec); n > 0 && n == len(b.OpsPerSec) && !slices.Contains(b.OpsPerSec, 0) {
			per := make([]float64, n)
			for j := range per {
				per[j] = r.OpsPerSec[j] / b.OpsPerSec[j]
			}
			x = median(per)
		}
		r.RatioToBaseline = &x
	}
}

// Charts draws one bar chart per workload and goroutine count into dir:
// a group of bars per cache, a bar per read share, the median throughput.
// It returns the files' names, in the order of the tables (workload after
// workload, goroutine counts in the report's order), which is the order
// WriteMarkdown takes them in.
func Charts(r *Report, dir string) ([]string, error) {
	results := r.byKey()
	var names []string
	for _, w := range r.Workloads {
		for _, m := range r.Mults {
			g := m * r.GOMAXPROCS
			ch := chart.Bars{
				Title: fmt.Sprintf("%s, %d goroutines: %s", w.Name, g, r.ofRounds("throughput")),
				Label: "millions of operations per second (more is better)",
			}
			for _, c := range r.Caches {
				ch.Categories = append(ch.Categories, c.Name)
			}
			for _, pct := range w.ReadPcts {
				s := chart.Series{Name: mixLabel(w, pct)}
				for _, c := range r.Caches {
					v := math.NaN()
					if res, ok := results[resultKey(w.Name, pct, g, c.Name)]; ok && len(res.OpsPerSec) > 0 {
						v = res.MedianOpsPerSec / 1e6
					}
					s.Values = append(s.Values, v)
				}
				ch.Series = append(ch.Series, s)
			}
			name := fmt.Sprintf("throughput-%s-%dg.png", w.Name, g)
			if err := ch.WriteFile(filepath.Join(dir, name)); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}

// ofRounds names what the report shows of the rounds' figures of what:
// "median throughput of 5 rounds" for "throughput", or with a single
// round, which has no median, "throughput of 1 round".
func (r *Report) ofRounds(what string) string {
	if r.Rounds == 1 {
		return what + " of 1 round"
	}
	return fmt.Sprintf("median %s of %d rounds", what, r.Rounds)
}

// WriteMarkdown writes the report as a Markdown document: a header with
// the command and the machine, the caches' configurations, and the tables,
// each followed by its chart if charts (the paths of Charts' files,
// relative to the document, in Charts' order) has one.
func WriteMarkdown(w io.Writer, r *Report, charts []string) error {
	var b strings.Builder
	b.WriteString("# Throughput\n\n")
	b.WriteString("<!-- Generated by bench/cmd/throughput (bench/run.sh); do not edit by hand. -->\n\n")
	fmt.Fprintf(&b, "Generated by `%s` on %s.\n\n", r.Command, r.Date)
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| Go | %s %s/%s |\n", r.GoVersion, r.OS, r.Arch)
	fmt.Fprintf(&b, "| CPU | %s, %d cores (GOMAXPROCS %d) |\n", cellText(r.CPU), r.Cores, r.GOMAXPROCS)
	if r.Revision != "" {
		fmt.Fprintf(&b, "| cachekit | %s |\n", cellText(r.Revision))
	}
	if len(r.Modules) > 0 {
		var ms []string
		for _, m := range r.Modules {
			ms = append(ms, m.Path+" "+m.Version)
		}
		fmt.Fprintf(&b, "| peers | %s |\n", cellText(strings.Join(ms, ", ")))
	}
	if r.Rounds == 1 {
		fmt.Fprintf(&b, "| method | 1 round: every cache runs every cell once for %s with a fresh instance, caches interleaved |\n", r.Duration)
	} else {
		fmt.Fprintf(&b, "| method | %d rounds; in each, every cache runs every cell for %s with a fresh instance, caches interleaved; medians over the rounds |\n",
			r.Rounds, r.Duration)
	}
	if r.LoadBefore != "" || r.LoadAfter != "" {
		fmt.Fprintf(&b, "| load average (1, 5, 15 min) | %s before, %s after |\n", cellText(r.LoadBefore), cellText(r.LoadAfter))
	}
	b.WriteString("\n")
	b.WriteString(report.BusyWarning(r.LoadBefore, r.Cores, "these figures are", "Regenerate them with bench/run.sh on a quiet machine"))
	if r.Note != "" {
		fmt.Fprintf(&b, "> **Note.** %s\n\n", r.Note)
	}
	of := "the median of the rounds (the JSON file has every round's figure)"
	multiple := ", the median over the rounds of the multiple within each round " +
		"(a cache and cachekit run within seconds of each other in a round, while the machine's speed may change between rounds)"
	if r.Rounds == 1 {
		of, multiple = "the figure of the one round", ""
	}
	b.WriteString("Figures are millions of operations per second summed over all goroutines, " + of + ". " +
		"In parentheses: the cache's throughput as a multiple of cachekit's " +
		"in the same cell" + multiple + ", so below 1.00× cachekit is faster, above it slower. " +
		"docs/benchmarks/README.md explains the method and the fairness choices.\n\n")

	b.WriteString("## Caches\n\n| cache | bounded | configuration |\n|---|---|---|\n")
	for _, c := range r.Caches {
		bounded := "no"
		if c.Bounded {
			bounded = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", c.Name, bounded, cellText(c.Config))
	}
	b.WriteString("\nThe unbounded caches never evict: in the evicting workloads they grow to the whole key space. " +
		"They are baselines (how fast a concurrent map is), not competitors there.\n\n")
	writeTables(&b, r, "##", charts)
	writeSpread(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSpread summarises how much the rounds disagreed: for each cache,
// over its cells, the median and the largest of (max − min) / median.
func writeSpread(b *strings.Builder, r *Report) {
	if r.Rounds < 2 {
		return
	}
	b.WriteString("## Spread between rounds\n\n")
	b.WriteString("For each cache, over all its cells: the median and the largest spread (max − min) / median of the rounds' figures. " +
		"A difference between two caches smaller than their spread is noise.\n\n")
	b.WriteString("| cache | median spread | largest spread | in |\n|---|---:|---:|---|\n")
	for _, c := range r.Caches {
		var spreads []float64
		worst, where := -1.0, ""
		for _, res := range r.Results {
			if res.Cache != c.Name || len(res.OpsPerSec) < 2 || res.MedianOpsPerSec <= 0 {
				continue
			}
			x := (slices.Max(res.OpsPerSec) - slices.Min(res.OpsPerSec)) / res.MedianOpsPerSec
			spreads = append(spreads, x)
			if x > worst {
				worst = x
				where = fmt.Sprintf("%s, %d%% reads, %d goroutines", res.Workload, res.ReadPct, res.Goroutines)
			}
		}
		if len(spreads) == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %.0f%% | %.0f%% | %s |\n", c.Name, 100*median(spreads), 100*worst, where)
	}
	b.WriteString("\n")
}

// WriteTables writes only the tables, as Markdown (the command prints
// them).
func WriteTables(w io.Writer, r *Report) error {
	var b strings.Builder
	writeTables(&b, r, "#", nil)
	_, err := io.WriteString(w, b.String())
	return err
}

// byKey returns the results by resultKey.
func (r *Report) byKey() map[string]Result {
	results := map[string]Result{}
	for _, res := range r.Results {
		results[resultKey(res.Workload, res.ReadPct, res.Goroutines, res.Cache)] = res
	}
	return results
}

func writeTables(b *strings.Builder, r *Report, h string, charts []string) {
	results := r.byKey()
	chartIdx := 0
	for _, w := range r.Workloads {
		fmt.Fprintf(b, "%s %s\n\n", h, w.Name)
		fmt.Fprintf(b, "%s. The stream holds %d distinct keys.\n\n", capitalize(w.Description), w.DistinctKeys)
		for _, m := range r.Mults {
			g := m * r.GOMAXPROCS
			fmt.Fprintf(b, "%s# %d goroutines (GOMAXPROCS × %d)\n\n", h, g, m)
			tableHeader(b, w)
			for _, c := range r.Caches {
				fmt.Fprintf(b, "| %s |", c.Name)
				for _, pct := range w.ReadPcts {
					res, ok := results[resultKey(w.Name, pct, g, c.Name)]
					switch {
					case !ok || len(res.OpsPerSec) == 0:
						b.WriteString(" – |")
					case res.RatioToBaseline == nil || c.Name == Baseline:
						fmt.Fprintf(b, " %.2f |", res.MedianOpsPerSec/1e6)
					default:
						fmt.Fprintf(b, " %.2f (%.2f×) |", res.MedianOpsPerSec/1e6, *res.RatioToBaseline)
					}
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
			if chartIdx < len(charts) {
				fmt.Fprintf(b, "![%s, %d goroutines](%s)\n\n", w.Name, g, filepath.ToSlash(charts[chartIdx]))
			}
			chartIdx++
			of := "median" // a single round has none
			if r.Rounds == 1 {
				of = "1 round"
			}
			if w.SetOnMiss {
				figureTable(b, r, results, w, g, fmt.Sprintf("Hit ratio of the Gets with %d goroutines (%%, %s):", g, of),
					func(res Result) *float64 { return res.MedianHitRatio })
			}
			figureTable(b, r, results, w, g, fmt.Sprintf("Operations of the slowest of the %d goroutines, as %% of the mean per goroutine (%s):", g, of),
				func(res Result) *float64 { return res.MedianSlowestShare })
		}
	}
}

// figureTable writes a table of one percentage per cache and read share
// in the cell of w with g goroutines, that get picks out of a result (nil:
// none), under the line title; nothing if no result has one.
func figureTable(b *strings.Builder, r *Report, results map[string]Result, w WorkloadInfo, g int, title string, get func(Result) *float64) {
	found := false
	for _, c := range r.Caches {
		for _, pct := range w.ReadPcts {
			res, ok := results[resultKey(w.Name, pct, g, c.Name)]
			found = found || (ok && get(res) != nil)
		}
	}
	if !found {
		return
	}
	fmt.Fprintf(b, "%s\n\n", title)
	tableHeader(b, w)
	for _, c := range r.Caches {
		fmt.Fprintf(b, "| %s |", c.Name)
		for _, pct := range w.ReadPcts {
			res, ok := results[resultKey(w.Name, pct, g, c.Name)]
			if !ok || get(res) == nil {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %.1f |", 100**get(res))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// tableHeader writes the header of a table with a column per read share
// of w.
func tableHeader(b *strings.Builder, w WorkloadInfo) {
	b.WriteString("| cache |")
	for _, pct := range w.ReadPcts {
		fmt.Fprintf(b, " %s |", mixLabel(w, pct))
	}
	b.WriteString("\n|---|")
	for range w.ReadPcts {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
}

func resultKey(workload string, pct, goroutines int, cache string) string {
	return fmt.Sprintf("%s/%d/%d/%s", workload, pct, goroutines, cache)
}

// mixLabel names a read share in a table header: "75/25" for a read/write
// mix, "90% reads" for a workload whose reads may also write.
func mixLabel(w WorkloadInfo, pct int) string {
	if w.SetOnMiss {
		return fmt.Sprintf("%d%% reads", pct)
	}
	return fmt.Sprintf("%d/%d", pct, 100-pct)
}

// cellText makes s safe inside a Markdown table cell.
func cellText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
