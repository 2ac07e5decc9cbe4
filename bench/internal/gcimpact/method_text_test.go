package gcimpact

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// methodJob is the template of a run with the given -forced.
func methodJob(forced int) Job {
	return Job{ValueBytes: 100, ForcedGCs: forced, ChurnRate: 100_000, RequestRate: 20_000,
		MinWindow: 10 * time.Second, MaxWindow: time.Minute, MinCycles: 3, Seed: 1}
}

// methodResult is a result of cache with entries.
func methodResult(cache string, entries int) Result {
	return Result{Cache: cache, Entries: entries, Held: entries, Forced: []time.Duration{time.Millisecond}, Window: time.Second,
		Cycles: 3, GCCPU: 0.1, P50: time.Microsecond, P999: time.Millisecond}
}

// With -forced above maxForced (25) the method said "runtime.GC() 30
// times, or more (up to 25)", a bound below the count RunJob actually
// runs; it now says "30 times", as RunJob runs them.
func TestForcedCountAboveMaxForced(t *testing.T) {
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{0, 1000}, Template: methodJob(30), Rounds: 1}
	text := r.MethodText()
	if strings.Contains(text, "30 times, or more (up to 25)") || !strings.Contains(text, "`runtime.GC()` 30 times;") {
		t.Errorf("the method does not say that 30 forced collections are run:\n%s", text)
	}
}

// With -sizes 0 alone the method said the empty caches were "built for
// empty entries" (SizeLabel(0) of the largest size) instead of their
// capacity (1, as Config.Jobs builds them), and described keys and a
// churn of "0 of them"; it now says "built … for 1 entry" and drops the
// keys.
func TestMethodWithOnlyEmptySize(t *testing.T) {
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{0}, Template: methodJob(5), Rounds: 1,
		Caches: []Cache{{Name: "map"}}, Results: []Result{methodResult(None, 0), methodResult("map", 0)}}
	text := r.MethodText()
	if strings.Contains(text, "built for empty entries") {
		t.Errorf("the method says the caches were built for \"empty\" entries:\n%s", text)
	}
	if j := (Config{Caches: []string{"map"}, Sizes: r.Sizes, Template: r.Template}).Jobs(0); j[0].Capacity != 1 || !strings.Contains(text, "for 1 entry and left empty") {
		t.Errorf("the jobs build caches for %d entries; the method says:\n%s", j[0].Capacity, text)
	}
	for _, wrong := range []string{"key:0", "0 of them"} {
		if strings.Contains(text, wrong) {
			t.Errorf("the method of a run without entries has %q:\n%s", wrong, text)
		}
	}
}

// Without size 0 (-sizes 1000) neither the baseline nor an empty cache is
// measured, yet the document described "the baseline **none**" and the
// "empty" caches, and the charts kept a "none" row with no bar; both now
// depend on Sizes holding 0.
func TestBaselineDescribedWhenNotMeasured(t *testing.T) {
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{1000}, Template: methodJob(5), Rounds: 1,
		Caches: []Cache{{Name: "map"}}, Results: []Result{methodResult("map", 1000)}}
	md := r.Markdown(nil)
	if strings.Contains(md, "| none |") {
		t.Fatalf("a none row appeared:\n%s", md)
	}
	for _, wrong := range []string{"The baseline **none** is the same process without any cache", "built for 1k entries and left empty"} {
		if strings.Contains(md, wrong) {
			t.Errorf("the document describes an unmeasured run: %q", wrong)
		}
	}
	if names := r.names(); len(names) != 1 || names[0] != "map" {
		t.Errorf("the charts' and tables' rows are %q, want only map", names)
	}
	if _, err := r.Charts(t.TempDir(), "gc", nil); err != nil {
		t.Fatal(err)
	}
}
