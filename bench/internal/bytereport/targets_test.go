package bytereport

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
)

// TestTargetsWithoutFastcacheFigure: a write share fastcache has no
// ns/op for (0) leaves its throughput target not measured; it was marked
// missed, with fastcache's throughput 0.00× bytecache's.
func TestTargetsWithoutFastcacheFigure(t *testing.T) {
	r := Report{
		Articles: articles.Report{Entries: 100, WritePcts: WritePcts, Caches: articles.Describe(Caches)},
		GC:       gcimpact.Report{Sizes: []int{0, 1000}},
	}
	r.Articles.Caches[0].Results = []articles.Result{fake(40, 50, 40, 30, 60)} // bytecache
	r.Articles.Caches[1].Results = []articles.Result{fake(45)}                 // fastcache: no timed phase
	ts := r.Targets()
	for _, x := range ts[1:3] {
		if x.Known {
			t.Errorf("target %q known without fastcache's figure: met %v, %s", x.What, x.Met, x.Measured)
		}
	}
}

// TestTargetsWithoutGCSizes: a report without the GC experiment's
// sizes (a JSON file without them) has its GC targets not measured, and
// renders; Targets panicked (slices.Max of no sizes).
func TestTargetsWithoutGCSizes(t *testing.T) {
	r := Report{Articles: articles.Report{Entries: 100, WritePcts: WritePcts, Caches: articles.Describe(Caches)},
		GC: gcimpact.Report{Results: []gcimpact.Result{gcResult("bytecache", 0, time.Millisecond)}}}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("a report without GC sizes panicked: %v", p)
		}
	}()
	ts := r.Targets()
	if len(ts) != 5 {
		t.Fatalf("%d targets, want 5", len(ts))
	}
	for _, x := range ts[3:] {
		if x.Known {
			t.Errorf("target %q known without GC sizes: %s", x.What, x.Measured)
		}
	}
	if md := r.Markdown(nil); !strings.Contains(md, "| with the most entries, a forced GC at most 2× as long as with an empty cache | – | not measured |") {
		t.Errorf("the GC target is not shown as not measured:\n%s", md)
	}
}
