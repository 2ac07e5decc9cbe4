package footprint

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/memstat"
)

// perEntryReport returns a synthetic report of the given caches at 1,000
// entries, one round; heap and rss are the bytes per entry (pair
// included) of each cache after the fill, churn those after the churn
// (nil: no churn jobs).
func perEntryReport(caches []string, heap, rss, churn map[string]float64) *Report {
	r := &Report{Sizes: []int{1000}, TTL: "1h", Rounds: 1, Caches: caches}
	if churn != nil {
		r.Churn = 2
	}
	for _, c := range caches {
		r.Configs = append(r.Configs, "cfg")
		r.Results = append(r.Results, Result{Cache: c, Entries: 1000, Held: 1000,
			Memory: memstat.Delta{HeapInuse: int64(heap[c] * 1000), RSS: int64(rss[c] * 1000)}})
		if v, ok := churn[c]; ok {
			r.Results = append(r.Results, Result{Cache: c, Entries: 1000, Churn: 2, Held: 1000,
				Memory: memstat.Delta{HeapInuse: int64(v * 1000), RSS: int64(v * 1000)}})
		}
	}
	return r
}

// section returns the text of md from the heading that starts with head
// to the next heading.
func section(md, head string) string {
	_, s, ok := strings.Cut(md, head)
	if !ok {
		return ""
	}
	if e := strings.Index(s, "\n## "); e >= 0 {
		s = s[:e]
	}
	return s
}

// A ratio to cachekit's figure is printed with report.Ratio, which adds
// the decimals that tell it from 1 ("(1.004×)"): it was printed with
// %.2f, so a figure 0.4% above cachekit's read as a tie, and memory.md's
// churn table showed otter "136 (1.00×)" against cachekit's 136 for
// 136.43 against 135.85 (1.004×).
func TestRatioNotATieThatIsNot(t *testing.T) {
	r := perEntryReport([]string{"cachekit", "otter"},
		map[string]float64{"cachekit": 1032, "otter": 1036}, map[string]float64{"cachekit": 1032, "otter": 1036}, nil)
	tab := r.HeapTable()
	if strings.Contains(tab, "(1.00×)") || !strings.Contains(tab, "(1.004×)") {
		t.Errorf("otter's 1004 against cachekit's 1000 is not shown as 1.004×:\n%s", tab)
	}
}

// memory.md's closing paragraph claims no ranking for ristretto, which
// only the figures can give: it said "ristretto stores two hashes instead
// of the key, which makes it smaller than a cache that keeps its keys"
// whatever was measured, while the committed run has ristretto the
// largest cache of all (554 against cachekit's 113 bytes per entry).
func TestNoRistrettoRankingAgainstFigures(t *testing.T) {
	r := perEntryReport([]string{"cachekit", "ristretto"},
		map[string]float64{"cachekit": 145, "ristretto": 586}, map[string]float64{"cachekit": 163, "ristretto": 317}, nil)
	md := r.Markdown("")
	if strings.Contains(md, "makes it smaller") {
		t.Errorf("memory.md says ristretto is smaller, with ristretto 4× cachekit's heap:\n%s", md[strings.Index(md, "## Caches"):])
	}
}

// The text speaks only of the caches of the run, and describes each one
// run: with -caches cachekit,otter the heap section said the byte caches
// (naming fastcache and bytecache) are in the resident-set table, and the
// closing paragraph described freecache's, fastcache's, bytecache's,
// bigcache's, map's and ristretto's settings.
func TestNoSentencesAboutCachesNotRun(t *testing.T) {
	r := perEntryReport([]string{"cachekit", "otter"},
		map[string]float64{"cachekit": 145, "otter": 150}, map[string]float64{"cachekit": 163, "otter": 170}, nil)
	md := r.Markdown("")
	for _, name := range []string{"fastcache", "bytecache", "freecache", "bigcache", "ristretto", "`map`"} {
		if strings.Contains(md, name) {
			t.Errorf("a run of cachekit and otter mentions %s:\n%s", name, md)
		}
	}
	// With them run, they are described.
	all := []string{"cachekit", "ristretto", "map", "bigcache", "freecache", "fastcache", "bytecache"}
	m := map[string]float64{}
	for _, c := range all {
		m[c] = 100
	}
	md = perEntryReport(all, m, m, nil).Markdown("")
	for _, want := range []string{"(fastcache's and bytecache's chunks)", "freecache, fastcache and bytecache get a budget",
		"fastcache rounds it up", "freecache to its minimum", "bigcache has no byte bound", "`map` is a plain", "ristretto stores two hashes"} {
		if !strings.Contains(md, want) {
			t.Errorf("a run of every cache does not say %q", want)
		}
	}
}

// A run with -rounds 1 says "Medians of 1 round.": it said "Medians of 1
// rounds."
func TestOneRoundSingular(t *testing.T) {
	md := perEntryReport([]string{"cachekit"}, map[string]float64{"cachekit": 100}, map[string]float64{"cachekit": 100}, nil).Markdown("")
	if strings.Contains(md, "1 rounds") || !strings.Contains(md, "Medians of 1 round.") {
		t.Errorf("one round is not said in the singular:\n%s", md)
	}
}

// A run without cachekit, whose tables have no ratios, shows and
// announces none: it said "In parentheses: as a multiple of cachekit's."
func TestNoRatioSentenceWithoutCachekit(t *testing.T) {
	md := perEntryReport([]string{"otter", "map"}, map[string]float64{"otter": 100, "map": 60}, map[string]float64{"otter": 100, "map": 60}, nil).Markdown("")
	if strings.Contains(md, "multiple of cachekit's") {
		t.Errorf("memory.md speaks of ratios to cachekit, which was not run:\n%s", md)
	}
	if strings.Contains(md, "×)") {
		t.Errorf("a ratio is shown without cachekit:\n%s", md)
	}
}

// The churn section says "these figures are higher than those after the
// fill" only when every churn figure is above its fill figure: it said so
// whatever the figures, of a cache lower after the churn than after the
// fill too.
func TestChurnHigherOnlyWhenMeasured(t *testing.T) {
	heap := map[string]float64{"cachekit": 145, "otter": 150}
	lower := perEntryReport([]string{"cachekit", "otter"}, heap, heap, map[string]float64{"cachekit": 190, "otter": 140}).Markdown("")
	if strings.Contains(section(lower, "## Go heap in use after churn"), "these figures are higher than those after the fill") {
		t.Errorf("otter's 108 after the churn, below its 118 after the fill, is said to be higher:\n%s", section(lower, "## Go heap in use after churn"))
	}
	higher := perEntryReport([]string{"cachekit", "otter"}, heap, heap, map[string]float64{"cachekit": 190, "otter": 160}).Markdown("")
	if !strings.Contains(section(higher, "## Go heap in use after churn"), "these figures are higher than those after the fill") {
		t.Errorf("every figure higher after the churn, and the section does not say so:\n%s", section(higher, "## Go heap in use after churn"))
	}
}

// An overhead between −0.5 and 0 bytes per entry (a cache that measured a
// hair under the pair's 32 bytes) is printed without a minus sign, and so
// is its ratio to cachekit's: it was printed "-0", and its ratio
// "(-0.00×)".
func TestNoNegativeZero(t *testing.T) {
	r := perEntryReport([]string{"cachekit", "map"}, map[string]float64{"cachekit": 100, "map": 31.7}, map[string]float64{"cachekit": 100, "map": 31.7}, nil)
	for _, tab := range []string{r.HeapTable(), r.RSSTable()} {
		if strings.Contains(tab, "| -0 ") || strings.Contains(tab, "-0.00") {
			t.Errorf("an overhead of −0.3 is printed -0 (or its ratio -0.00×):\n%s", tab)
		}
	}
}
