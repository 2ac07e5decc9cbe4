package bytereport

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
)

// bytecache.md's introduction said "1M encoded structs" and "10M entries"
// whatever -entries and -gc-entries the run used; it now states the sizes
// the report holds.
func TestIntroStatesMeasuredSizes(t *testing.T) {
	r := Report{
		Articles: articles.Report{Entries: 100000, Goroutines: 2, Duration: "1s", Rounds: 1, WritePcts: WritePcts, Caches: articles.Describe(Caches)},
		GC:       gcimpact.Report{Sizes: []int{0, 1000000}},
	}
	r.Articles.Caches[0].Results = []articles.Result{fake(40, 50, 40, 30, 60)}
	r.Articles.Caches[1].Results = []articles.Result{fake(45, 60, 35, 30, 60)}
	md := r.Markdown(nil)
	intro, _, _ := strings.Cut(md, "## Targets")
	for _, bad := range []string{"1M encoded structs", "10M entries"} {
		if strings.Contains(intro, bad) {
			t.Errorf("the introduction says %q; the report measured %d structs and GC sizes %v", bad, r.Articles.Entries, r.GC.Sizes)
		}
	}
}
