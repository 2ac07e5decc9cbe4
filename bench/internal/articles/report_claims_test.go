package articles

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/memstat"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// roundResult is one round of a cache: held entries, heap MiB, and the ns/op
// of each write share of WritePcts (a phase per figure given).
func roundResult(held int, heapMB int64, ns ...float64) Result {
	r := Result{Held: held, Memory: memstat.Delta{HeapInuse: heapMB << 20, RSS: heapMB << 20}}
	for i, x := range ns {
		r.Phases = append(r.Phases, Phase{WritePct: WritePcts[i], Ops: 1000, Gets: 900, Hits: 900, Elapsed: time.Duration(x * 1000)})
	}
	return r
}

// cachesReport returns a report of the named caches (Describe), 1,000
// entries, one round each unless results are given.
func cachesReport(names ...string) *Report {
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Entries: 1000, Goroutines: 2, Duration: "1s", Rounds: 1,
		WritePcts: WritePcts, Caches: Describe(names)}
	for i := range r.Caches {
		r.Caches[i].Results = []Result{roundResult(1000, 100, 100, 100)}
	}
	return r
}

// A ratio to cachekit's figure is printed with report.Ratio, with the
// decimals that tell it from 1 (996 ns/op against 1,000 is "0.996×"): it
// was printed with %.2f, so a figure 0.4% under cachekit's read as a tie,
// and articles.md showed go-cache's 685.4 ns/op against cachekit's 688.1
// as "(1.00×)".
func TestRatioNotATieThatIsNot(t *testing.T) {
	r := cachesReport("cachekit", "otter")
	r.Caches[0].Results = []Result{roundResult(1000, 100, 1000, 1000)}
	r.Caches[1].Results = []Result{roundResult(1000, 100, 996, 1000)}
	tab := r.Table(nil, "cachekit")
	if !strings.Contains(tab, "996.0 (0.996×)") {
		t.Errorf("otter's 996 ns/op against cachekit's 1000 is not 0.996×:\n%s", tab)
	}
}

// A run without cachekit (-caches otter,lru), whose table has no ratios,
// does not announce them: it said "In parentheses: the figure as a
// multiple of cachekit's."
func TestNoRatioSentenceWithoutCachekit(t *testing.T) {
	md := cachesReport("otter", "lru").Markdown(nil)
	if strings.Contains(md, "multiple of cachekit's") {
		t.Errorf("articles.md speaks of ratios to cachekit, which was not run:\n%s", md)
	}
}

// The text names only the caches of the run ("The byte cache (freecache)
// stores the struct binary-encoded" for a run of cachekit and freecache):
// it named caches that were not run, with "The byte caches (bigcache,
// freecache, fastcache) store the struct binary-encoded", "fastcache's
// chunks are allocated with mmap" and "bigcache gets none" for a run of
// cachekit and freecache only.
func TestNoSentencesAboutCachesNotRun(t *testing.T) {
	md := cachesReport("cachekit", "freecache").Markdown(nil)
	for _, bad := range []string{"bigcache", "fastcache", "bytecache"} {
		if strings.Contains(md, bad) {
			t.Errorf("a run of cachekit and freecache mentions %s:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "The byte cache (freecache) stores the struct binary-encoded") {
		t.Errorf("freecache's encoding is not described:\n%s", md)
	}
	md = cachesReport("cachekit", "otter").Markdown(nil)
	if strings.Contains(md, "byte cache") {
		t.Errorf("a run without byte caches speaks of them:\n%s", md)
	}
	md = cachesReport("cachekit", "bigcache", "freecache", "fastcache", "bytecache").Markdown(nil)
	for _, want := range []string{"The byte caches (bigcache, freecache, fastcache, and cachekit's bytecache through its `Typed` layer) store",
		"fastcache's chunks are allocated with mmap", "bigcache gets none"} {
		if !strings.Contains(md, want) {
			t.Errorf("a run of every byte cache does not say %q", want)
		}
	}
}

// A write share a cache has no timed phase for (a JSON file without it)
// is shown as "–", with no ratio, and has no bar (its figure is NaN): it
// was rendered as "0.0" ns/op, with a ratio "(0.00×)", and drawn as a
// zero-height bar.
func TestMissingPhaseIsNotZero(t *testing.T) {
	r := cachesReport("cachekit", "otter")
	r.Caches[1].Results = []Result{roundResult(1000, 100, 100)} // otter: no 0.1% phase
	tab := r.Table(nil, "cachekit")
	if strings.Contains(tab, "| 0.0 |") || strings.Contains(tab, "0.00×") {
		t.Errorf("otter's missing 0.1%% figure shows as 0:\n%s", tab)
	}
	if !strings.HasSuffix(strings.TrimSpace(strings.Split(tab, "\n")[3]), "| – |") {
		t.Errorf("otter's missing 0.1%% figure is not a dash:\n%s", tab)
	}
	s, _ := Lookup(r.Summaries(), "otter")
	if !math.IsNaN(s.NsPerOp[1]) {
		t.Errorf("otter's missing 0.1%% figure is %v, not NaN (missing, no bar)", s.NsPerOp[1])
	}
}

// The spread between rounds is "–" for a run of one round (and for a
// write share without figures), where no spread was measured: it was
// "0%", which says there was no noise at all.
func TestSpreadOfOneRoundIsNotZero(t *testing.T) {
	md := cachesReport("cachekit", "otter").Markdown(nil)
	_, spread, _ := strings.Cut(md, "## Spread between rounds")
	spread, _, _ = strings.Cut(spread, "## Caches")
	if strings.Contains(spread, "| 0% |") {
		t.Errorf("one round's spread shows as 0%%:\n%s", spread)
	}
	r := cachesReport("cachekit")
	r.Rounds = 2
	r.Caches[0].Results = []Result{roundResult(1000, 100, 100, 100), roundResult(1000, 100, 110, 100)}
	md = r.Markdown(nil)
	if !strings.Contains(md, "| cachekit | 10% | 0% |") {
		t.Errorf("two rounds' spread is not shown:\n%s", md)
	}
}

// A run with -rounds 1 is described as "(1 round, caches interleaved":
// it said "1 rounds".
func TestOneRoundSingular(t *testing.T) {
	md := cachesReport("cachekit").Markdown(nil)
	if strings.Contains(md, "1 rounds") || !strings.Contains(md, "(1 round, caches interleaved") {
		t.Errorf("one round is not said in the singular:\n%s", md[:min(len(md), 1500)])
	}
}

// A cache that lost 1 entry of 1,000,000 is shown "(0.0001% lost)": it
// was shown "(0.0% lost)", a loss printed as none.
func TestSmallLossNotZeroPercent(t *testing.T) {
	r := cachesReport("cachekit")
	r.Entries = 1_000_000
	r.Caches[0].Results = []Result{roundResult(999_999, 100, 100, 100)}
	tab := r.Table(nil, "cachekit")
	if strings.Contains(tab, "(0.0% lost)") || !strings.Contains(tab, "(0.0001% lost)") {
		t.Errorf("1 entry lost of 1,000,000 is not 0.0001%%:\n%s", tab)
	}
}
