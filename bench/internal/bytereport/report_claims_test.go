package bytereport

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
)

// figuresReport returns a report with bytecache's and fastcache's figures:
// the resident MiB and the ns/op of each of WritePcts.
func figuresReport(bcNs, fcNs []time.Duration) Report {
	r := Report{
		Articles: articles.Report{Entries: 100, Goroutines: 2, Duration: "1s", Rounds: 3, WritePcts: WritePcts, Caches: articles.Describe(Caches)},
		GC:       gcimpact.Report{Sizes: []int{0, 1000}, Caches: gcimpact.Describe(GCCaches)},
	}
	r.Articles.Caches[0].Results = []articles.Result{fake(40, bcNs...)} // bytecache
	r.Articles.Caches[1].Results = []articles.Result{fake(45, fcNs...)} // fastcache
	return r
}

// The targets print their ratios with report.Ratio ("0.999×", "1.004×"),
// so a target missed by a hair does not read as a tie: they used %.2f,
// and bytecache's 400.2 ns/op against fastcache's 399.7 was "bytecache's
// throughput is 1.00× fastcache's" next to **missed**, and a forced GC
// 1.004× the empty cache's "(1.00×)".
func TestTargetRatiosNotATieThatIsNot(t *testing.T) {
	r := figuresReport([]time.Duration{4002, 100, 100, 100}, []time.Duration{3997, 100, 100, 100})
	r.GC.Results = []gcimpact.Result{gcResult("bytecache", 0, 1000*time.Microsecond), gcResult("bytecache", 1000, 1004*time.Microsecond)}
	ts := r.Targets()
	if x := ts[1]; !x.Known || x.Met || strings.Contains(x.Measured, "1.00×") || !strings.Contains(x.Measured, "0.999×") {
		t.Errorf("10%% writes target: met %v, %q; want missed, with 0.999×", x.Met, x.Measured)
	}
	if x := ts[3]; !x.Known || strings.Contains(x.Measured, "(1.00×)") || !strings.Contains(x.Measured, "(1.004×)") {
		t.Errorf("forced GC target: %q; want 1.004×", x.Measured)
	}
}

// The articles' section speaks only of the write shares the report holds,
// and announces ratios only when the table has them: it said "**0%
// writes** is pure parallel Gets, **100%** pure parallel Sets" for a JSON
// file with only the article's 10% and 0.1%, which has no such columns,
// and "In parentheses: as a multiple of bytecache's" without bytecache's
// figures, where the table has no ratios.
func TestNoSentencesAboutColumnsNotRun(t *testing.T) {
	r := figuresReport([]time.Duration{50, 40}, []time.Duration{60, 35})
	r.Articles.WritePcts = []float64{10, 0.1}
	md := r.Markdown(nil)
	for _, bad := range []string{"**0% writes**", "**100%**"} {
		if strings.Contains(md, bad) {
			t.Errorf("a report with 10%% and 0.1%% writes only says %q", bad)
		}
	}
	r = figuresReport([]time.Duration{50, 40, 30, 60}, []time.Duration{60, 35, 30, 60})
	md = r.Markdown(nil)
	for _, want := range []string{"**0% writes** is pure parallel Gets", "**100%** pure parallel Sets", "In parentheses: as a multiple of bytecache's"} {
		if !strings.Contains(md, want) {
			t.Errorf("the full report does not say %q", want)
		}
	}
	r.Articles.Caches[0].Results = nil // bytecache not measured
	if md := r.Markdown(nil); strings.Contains(md, "multiple of bytecache's") {
		t.Errorf("ratios to bytecache are announced without bytecache's figures")
	}
}

// A report without the GC experiment's sizes (a JSON file without them)
// names no size for it: it said "the GC experiment with 0 entries" and had
// a section "The GC experiment: 0 entries", a size that was never run.
func TestNoGCSizeNotZeroEntries(t *testing.T) {
	r := figuresReport([]time.Duration{50, 40, 30, 60}, []time.Duration{60, 35, 30, 60})
	r.GC = gcimpact.Report{}
	md := r.Markdown(nil)
	if strings.Contains(md, " 0 entries") {
		t.Errorf("a report without GC sizes speaks of 0 entries:\n%s", md)
	}
}
