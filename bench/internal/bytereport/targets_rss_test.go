package bytereport

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
)

// The memory target was judged even when the resident set was not measured
// (memstat.RSS is 0 where /proc/self/statm cannot be read): "met" next to
// "bytecache 0.0 MB, fastcache 0.0 MB (NaN×)". A figure of 0 now leaves the
// target unknown.
func TestMemoryTargetUnknownWithoutRSS(t *testing.T) {
	r := Report{
		Articles: articles.Report{Entries: 100, Goroutines: 2, Duration: "1s", Rounds: 1, WritePcts: WritePcts, Caches: articles.Describe(Caches)},
		GC:       gcimpact.Report{Sizes: []int{0, 1000}},
	}
	r.Articles.Caches[0].Results = []articles.Result{fake(0, 50, 40, 30, 60)} // bytecache, RSS not readable
	r.Articles.Caches[1].Results = []articles.Result{fake(0, 60, 35, 30, 60)} // fastcache, RSS not readable
	ts := r.Targets()
	if ts[0].Known {
		t.Errorf("memory target judged without a resident-set figure: met %v, %q", ts[0].Met, ts[0].Measured)
	}
	md := r.Markdown(nil)
	for _, bad := range []string{"NaN", "Inf×", "+Inf", "-Inf"} { // not "GetWithInfo"
		if strings.Contains(md, bad) {
			t.Errorf("bytecache.md prints %s in the targets:\n%s", bad, md[:min(len(md), 1500)])
		}
	}
}
