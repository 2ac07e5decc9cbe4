package bytereport

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
	"github.com/cachekit/cachekit/bench/internal/memstat"
)

func fake(rssMB int64, ns ...time.Duration) articles.Result {
	r := articles.Result{Held: 100, Memory: memstat.Delta{RSS: rssMB << 20, HeapInuse: rssMB << 20}}
	for i, d := range ns {
		r.Phases = append(r.Phases, articles.Phase{WritePct: WritePcts[i], Ops: 1000, Gets: 900, Hits: 900, Elapsed: 1000 * d})
	}
	return r
}

func gcResult(cache string, entries int, forced time.Duration) gcimpact.Result {
	return gcimpact.Result{Cache: cache, Entries: entries, Held: entries, Forced: []time.Duration{forced}, Window: time.Second, P999: time.Millisecond}
}

func TestTargets(t *testing.T) {
	r := Report{
		Articles: articles.Report{Entries: 100, Goroutines: 2, Duration: "1s", Rounds: 1, WritePcts: WritePcts, Caches: articles.Describe(Caches)},
		GC: gcimpact.Report{Sizes: []int{0, 1000}, Caches: gcimpact.Describe(GCCaches),
			Results: []gcimpact.Result{gcResult(gcimpact.None, 0, time.Millisecond), gcResult("bytecache", 0, time.Millisecond),
				gcResult("bytecache", 1000, 3*time.Millisecond), gcResult("map", 1000, 50*time.Millisecond)}},
	}
	r.Articles.Caches[0].Results = []articles.Result{fake(40, 50, 40, 30, 60)} // bytecache
	r.Articles.Caches[1].Results = []articles.Result{fake(45, 60, 35, 30, 60)} // fastcache
	ts := r.Targets()
	if len(ts) != 5 {
		t.Fatalf("%d targets, want 5", len(ts))
	}
	if ts[4].Known {
		t.Errorf("the CPU-time target is known without CPU figures: %+v", ts[4])
	}
	want := []bool{true, true, false, false} // memory, 10%, 0.1%, GC 3× empty
	for i, x := range ts[:4] {
		if !x.Known || x.Met != want[i] {
			t.Errorf("target %q: known %v, met %v; want met %v (%s)", x.What, x.Known, x.Met, want[i], x.Measured)
		}
	}
	md := r.Markdown([]string{"bytecache-memory.png", "bytecache-gc-forced.png"})
	for _, want := range []string{"| memory for 100 structs at most fastcache's (resident set) |", "**missed**", "| bytecache | bytes | 100 |",
		"![bytecache-gc-forced](bytecache-gc-forced.png)", "| map |", "benchstat -col /cache"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	r.Articles.Caches[1].Results = nil
	r.GC.Results = nil
	for _, x := range r.Targets() {
		if x.Known {
			t.Errorf("target %q known without figures", x.What)
		}
	}
}
