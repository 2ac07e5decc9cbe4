package visibility

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/chart"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

// Report is a run with its circumstances: what visibility.json holds.
type Report struct {
	report.Header
	Rounds           int      `json:"rounds"`
	Probes           int      `json:"probes"`
	ProbeGoroutines  []int    `json:"probe_goroutines"`
	ReplayCapacity   int      `json:"replay_capacity"`
	ReplayGoroutines int      `json:"replay_goroutines"`
	Caches           []string `json:"caches"`
	ReplayCaches     []string `json:"replay_caches"`
	Configs          []string `json:"configs"` // one per cache of Caches
	Results          *Results `json:"results"`
}

// probeSum adds up a cache's probes at one goroutine count over the
// rounds.
func (r *Report) probeSum(cache string, g int) (Probe, bool) {
	s := Probe{Cache: cache, Goroutines: g}
	found := false
	for _, p := range r.Results.Probes {
		if p.Cache != cache || p.Goroutines != g {
			continue
		}
		found = true
		s.Inserts += p.Inserts
		s.InsertMissed += p.InsertMissed
		s.InsertWrong += p.InsertWrong
		s.InsertLost += p.InsertLost
		s.Updates += p.Updates
		s.UpdateMissed += p.UpdateMissed
		s.UpdateStale += p.UpdateStale
		s.UpdateLost += p.UpdateLost
		s.UpdatedKeys += p.updatedKeys()
		s.SharedReads += p.SharedReads
		s.SharedMissed += p.SharedMissed
	}
	return s, found
}

// ReplayMedian returns the median hit ratio of a cache's replays with g
// goroutines.
func (r *Report) ReplayMedian(cache string, g int) (float64, bool) {
	var hs []float64
	for _, rp := range r.Results.Replays {
		if rp.Cache == cache && rp.Goroutines == g {
			hs = append(hs, rp.HitRatio())
		}
	}
	return report.Median(hs), len(hs) > 0
}

// share formats n of total as a percentage with the count: "0.120% (24)",
// or "0" for none.
func share(n, total uint64) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("%.3f%% (%d)", 100*float64(n)/float64(total), n)
}

// ProbeTables returns one table per goroutine count.
func (r *Report) ProbeTables(h string) string {
	var b strings.Builder
	for _, g := range r.ProbeGoroutines {
		t := report.NewTable("cache", ">new key: Get right after missed", ">new key: never stored", ">update: Get right after missed", ">update: Get right after saw an older value", ">update: lost", ">present key, overwritten by others: Get missed")
		rows := 0
		for _, c := range r.Caches {
			p, ok := r.probeSum(c, g)
			if !ok {
				continue
			}
			missed := share(p.InsertMissed, p.Inserts)
			if p.InsertWrong > 0 {
				missed += fmt.Sprintf("; **%d wrong values**", p.InsertWrong)
			}
			shared := "–"
			if p.SharedReads > 0 {
				shared = share(p.SharedMissed, p.SharedReads)
			}
			t.Row(c, missed, share(p.InsertLost, p.Inserts), share(p.UpdateMissed, p.Updates), share(p.UpdateStale, p.Updates), share(p.UpdateLost, p.UpdatedKeys), shared)
			rows++
		}
		if rows == 0 {
			continue // no cache measured with g goroutines: no heading over an empty table
		}
		fmt.Fprintf(&b, "%s %d goroutine%s\n\n", h, g, report.Plural(g))
		b.WriteString(t.String())
	}
	return b.String()
}

// ReplayTable returns the hit ratios of the replays. With
// ReplayGoroutines 1 the single-threaded replay is the only one, and the
// table has its column only.
func (r *Report) ReplayTable() string {
	g := r.ReplayGoroutines
	if g == 1 {
		t := report.NewTable("cache", ">1 goroutine: hit %")
		for _, c := range r.ReplayCaches {
			if one, ok := r.ReplayMedian(c, 1); ok {
				t.Row(c, fmt.Sprintf("%.2f", 100*one))
			}
		}
		return t.String()
	}
	t := report.NewTable("cache", ">1 goroutine: hit %", fmt.Sprintf(">%d goroutines: hit %%", g), ">difference (points)")
	for _, c := range r.ReplayCaches {
		one, ok1 := r.ReplayMedian(c, 1)
		many, ok2 := r.ReplayMedian(c, g)
		if !ok1 || !ok2 {
			continue
		}
		t.Row(c, fmt.Sprintf("%.2f", 100*one), fmt.Sprintf("%.2f", 100*many), report.Signed(100*(many-one)))
	}
	return t.String()
}

// replayCounts returns the goroutine counts of the replays: 1 and
// ReplayGoroutines, or 1 alone if that is ReplayGoroutines.
func (r *Report) replayCounts() []int {
	if r.ReplayGoroutines == 1 {
		return []int{1}
	}
	return []int{1, r.ReplayGoroutines}
}

// withText says with what goroutine counts the replays ran: "1 and 8
// goroutines", or "1 goroutine".
func (r *Report) withText() string {
	if r.ReplayGoroutines == 1 {
		return "1 goroutine"
	}
	return fmt.Sprintf("1 and %d goroutines", r.ReplayGoroutines)
}

// Chart draws the replays' hit ratios to dir/visibility-replay.png and
// returns the file's name.
func (r *Report) Chart(dir string) (string, error) {
	ch := r.bars()
	name := "visibility-replay.png"
	return name, ch.WriteFile(filepath.Join(dir, name))
}

// bars returns the chart of Chart. A replay that did not run has no bar
// (NaN), not a hit ratio of 0.
func (r *Report) bars() chart.Bars {
	ch := chart.Bars{
		Title:      fmt.Sprintf("Zipf replay, capacity %d: hit ratio with %s", r.ReplayCapacity, r.withText()),
		Label:      "hit ratio (%)",
		Categories: slices.Clone(r.ReplayCaches),
	}
	for _, g := range r.replayCounts() {
		s := chart.Series{Name: fmt.Sprintf("%d goroutine%s", g, report.Plural(g))}
		for _, c := range r.ReplayCaches {
			v := math.NaN()
			if h, ok := r.ReplayMedian(c, g); ok {
				v = 100 * h
			}
			s.Values = append(s.Values, v)
		}
		ch.Series = append(ch.Series, s)
	}
	return ch
}

// Markdown renders visibility.md.
func (r *Report) Markdown(chartFile string) string {
	var b strings.Builder
	b.WriteString(r.Header.Markdown("Write visibility", "bench/cmd/visibility (make bench BENCH=visibility)"))
	b.WriteString("Does a Get see the Set that came right before it? Two measurements; docs/benchmarks/README.md explains the method.\n\n")
	b.WriteString("## Set, then Get at once\n\n")
	fmt.Fprintf(&b, "Each goroutine Sets a key and Gets it straight away on the same goroutine, %s times in all per run (shared by the goroutines), "+
		"all goroutines at once: first keys never written before (**new key**), then keys already present that only this goroutine writes, "+
		"each Set giving a new value (**update**). The caches have room for %s entries, far more than are written, so nothing needs to be evicted: "+
		"a miss is a write delayed, dropped or refused. With 2 goroutines or more, a third part has half of them (at least one) give random keys of a shared set of %d present keys new values "+
		"while the others Get random keys of it: every key is present throughout, so a miss there (**present key, overwritten by others**) is a Get that failed to see a key an overwrite was replacing. After each part the cache applies its pending writes (ristretto `Wait`, theine `Wait`, otter `CleanUp`) "+
		"and every key is read again: **never stored** and **lost** count the writes that never took effect. "+
		"Figures are summed over %d round%s (a fresh cache per run).",
		report.Thousands(r.Probes), report.Thousands(ProbeCapacity), sharedKeys, r.Rounds, report.Plural(r.Rounds))
	if maps, missed := r.mapProbes(); len(missed) > 0 {
		fmt.Fprintf(&b, " The unbounded maps are there as the reference, but here %s missed too.", strings.Join(missed, ", "))
	} else if len(maps) > 0 {
		b.WriteString(" The unbounded maps are there as the reference: a map never misses.")
	}
	b.WriteString("\n\n")
	b.WriteString(r.ProbeTables("###"))
	b.WriteString("## Hit ratio of a concurrent replay\n\n")
	if len(r.ReplayCaches) == 0 {
		// -caches named no bounded cache and -replay-caches none.
		b.WriteString("No cache was replayed: the replay runs the caches of -replay-caches, by default the bounded ones of -caches, and there were none.\n\n")
		r.writeCaches(&b)
		return b.String()
	}
	spread := "" // with 1 goroutine, the only replay
	if g := r.ReplayGoroutines; g != 1 {
		spread = fmt.Sprintf("; with %d, goroutine i takes keys i, i+%d, i+%d, …, so together they follow the stream's order as closely as their scheduling allows", g, g, 2*g)
	}
	fmt.Fprintf(&b, "One Zipf stream (s = %.2f over %s keys, %s requests, %s distinct keys; the evicting workload of throughput.md) replayed through a fresh cache of capacity %s: "+
		"Get each key, Set it on a miss. With 1 goroutine the keys go in order%s. Lossy read buffers (which drop policy updates under contention) and dropped Sets can cost hits that a single-threaded replay, "+
		"or a simulator, never shows. Medians of %d round%s. No cache is told to wait for its buffers: this is how each behaves as configured for production.\n\n",
		workload.EvictZipfS, report.Thousands(workload.EvictKeySpaceFactor*r.ReplayCapacity), report.Thousands(r.Results.StreamLen), report.Thousands(r.Results.StreamKeys), report.Thousands(r.ReplayCapacity),
		spread, r.Rounds, report.Plural(r.Rounds))
	b.WriteString(r.ReplayTable())
	if chartFile != "" {
		fmt.Fprintf(&b, "![hit ratio with %s](%s)\n\n", r.withText(), chartFile)
	}
	r.writeCaches(&b)
	return b.String()
}

// writeCaches writes the section on the caches' configurations.
func (r *Report) writeCaches(b *strings.Builder) {
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
}

// mapProbes returns the unbounded caches (the maps, see adapter.Info's
// Bounded) whose probes were measured, and those of them that missed,
// lost or misread a write at some goroutine count.
func (r *Report) mapProbes() (maps, missed []string) {
	for _, c := range r.Caches {
		if info, ok := adapter.Lookup(c); !ok || info.Bounded {
			continue
		}
		measured, miss := false, false
		for _, g := range r.ProbeGoroutines {
			p, ok := r.probeSum(c, g)
			if !ok {
				continue
			}
			measured = true
			if p.InsertMissed+p.InsertWrong+p.InsertLost+p.UpdateMissed+p.UpdateStale+p.UpdateLost+p.SharedMissed > 0 {
				miss = true
			}
		}
		if measured {
			maps = append(maps, c)
		}
		if miss {
			missed = append(missed, c)
		}
	}
	return maps, missed
}
