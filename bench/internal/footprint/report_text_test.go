package footprint

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/memstat"
)

// textReport returns a small synthetic report: cachekit (a bounded cache of
// Go values) and fastcache (a byte cache), at 1,000 entries, with or
// without churn.
func textReport(ttl string, churn int) *Report {
	r := &Report{Sizes: []int{1000}, TTL: ttl, Rounds: 1, Churn: churn,
		Caches: []string{"cachekit", "fastcache"}, Configs: []string{"c", "f"}}
	for _, c := range r.Caches {
		r.Results = append(r.Results, Result{Cache: c, Entries: 1000, Held: 1000,
			Memory: memstat.Delta{HeapInuse: 100_000, RSS: 120_000, HeapObjects: 2000}})
		if c == "cachekit" && churn > 0 {
			r.Results = append(r.Results, Result{Cache: c, Entries: 1000, Churn: churn, Held: 1000,
				Memory: memstat.Delta{HeapInuse: 150_000, RSS: 160_000, HeapObjects: 2000}})
		}
	}
	return r
}

// The heap section said "so the byte caches are only in the next table",
// but with churn (the default) the next table is "Go heap in use after
// churn", which never holds a byte cache; their figures are in "Resident
// set". The sentence now names that table, which must hold them.
func TestByteCachesTableNamed(t *testing.T) {
	md := textReport("1h", 2).Markdown("")
	const claim = "so the byte caches are only in the resident-set table below"
	if !strings.Contains(md, claim) {
		t.Fatalf("the heap section does not say %q:\n%s", claim, md)
	}
	_, rss, ok := strings.Cut(md, "## Resident set")
	if !ok {
		t.Fatal("no resident-set section")
	}
	if e := strings.Index(rss, "\n## "); e >= 0 {
		rss = rss[:e]
	}
	if !strings.Contains(rss, "| fastcache |") {
		t.Errorf("the resident-set section has no fastcache row:\n%s", rss)
	}
}

// A run with -ttl 0 sets no TTL (the adapters set one only when it is
// positive), but memory.md said "with a TTL of 0s on every entry" and the
// chart "TTL set". Both now say there is none.
func TestZeroTTLIsNoTTL(t *testing.T) {
	md := textReport("0s", 0).Markdown("")
	if strings.Contains(md, "with a TTL of") || !strings.Contains(md, "without a TTL") {
		t.Errorf("a run with -ttl 0 (no TTL set) is not described as one without a TTL:\n%s", md[:min(len(md), 800)])
	}
	if md := textReport("1h", 0).Markdown(""); !strings.Contains(md, "with a TTL of 1h") {
		t.Errorf("a run with -ttl 1h does not say so:\n%s", md[:min(len(md), 800)])
	}
}
