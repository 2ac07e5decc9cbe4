package gcimpact

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// The churn is described as replacing as many keys as churn draws,
// min(N, 65,536) for a cache of N entries, so the count follows the
// sizes run: it was "65,536" keys (min(1<<16, largest size)) at every
// size, though with -sizes 0,1000,2000000 the 1,000-entry caches churned
// 1,000 keys.
func TestChurnKeysFollowTheSizes(t *testing.T) {
	for _, tc := range []struct {
		sizes []int
		want  string
	}{
		{[]int{0, 2_000_000, 10_000_000}, "(65,536 of them, drawn at random from the whole key space"},
		{[]int{0, 1000, 2_000_000}, "(min(N, 65,536) of them, drawn at random from the whole key space"},
		{[]int{1000, 5000}, "(N of them, drawn at random from the whole key space"},
	} {
		r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: tc.sizes, Template: methodJob(5), Rounds: 1}
		if text := r.MethodText(); !strings.Contains(text, tc.want) {
			t.Errorf("sizes %v: the churn is not described with %q:\n%s", tc.sizes, tc.want, text)
		}
	}
}

// With -churn 0 the method says the churn goroutine does nothing (churn
// returns at once): it said the goroutine "replaces the values … at 0
// Sets/s".
func TestNoChurnDescribed(t *testing.T) {
	j := methodJob(5)
	j.ChurnRate = 0
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{0, 1000}, Template: j, Rounds: 1}
	text := r.MethodText()
	if strings.Contains(text, "at 0 Sets/s") || strings.Contains(text, "replaces the values") {
		t.Errorf("a run without churn describes one:\n%s", text)
	}
	if !strings.Contains(text, "one goroutine does nothing (the churn rate is 0)") {
		t.Errorf("the method does not say there was no churn:\n%s", text)
	}
}

// The window's bounds read "1m", "10s", "1m30s", and one collection "1
// collection has finished": the bounds were printed with time.Duration's
// String, so -max-window 1m read "(at most 1m0s)" next to "at least
// 10s", and one collection was "1 collections have finished".
func TestWindowDurationsInProse(t *testing.T) {
	j := methodJob(5)
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{0, 1000}, Template: j, Rounds: 1}
	text := r.MethodText()
	if strings.Contains(text, "1m0s") || !strings.Contains(text, "lasts at least 10s and until 3 collections have finished (at most 1m)") {
		t.Errorf("the window is not \"at least 10s … (at most 1m)\":\n%s", text)
	}
	j.MaxWindow, j.MinCycles = 90*time.Second, 1
	r.Template = j
	if text := r.MethodText(); !strings.Contains(text, "until 1 collection has finished (at most 1m30s)") {
		t.Errorf("the window of 1 cycle, at most 90s, is not described as such:\n%s", text)
	}
}

// The summary's headings say what the figures are, from the number of
// runs: the forced GC is the median over the runs of each run's fastest
// collection (Row.ForcedMs), and the CPU time of a single run is the
// mean per collection. The forced GC was headed "(ms, the fastest of the
// runs)", and the CPU time of a single run "median".
func TestForcedHeadingsFollowTheRounds(t *testing.T) {
	res := func(round int) Result {
		r := methodResult("map", 1000)
		r.Forced = []time.Duration{time.Duration(round+1) * time.Millisecond, 10 * time.Millisecond}
		return r
	}
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{1000}, Template: methodJob(5), Rounds: 3,
		Caches: []Cache{{Name: "map"}}, Results: []Result{res(0), res(1), res(2)}}
	md := r.Markdown(nil)
	if strings.Contains(md, "the fastest of the runs") {
		t.Errorf("the heading calls the median of 3 runs' fastest collections \"the fastest of the runs\":\n%s", md)
	}
	for _, want := range []string{
		"## Forced GC (ms, the fastest collection of each run, median of 3 runs)",
		"| map | 2.00 |", // the runs' fastest: 1, 2, 3 ms
		"## CPU time of a forced GC (ms of process CPU per collection, median of 3 runs)",
		"## The fill: the slowest Set (ms, median of 3 runs)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the document lacks %q:\n%s", want, md)
		}
	}
	r.Rounds, r.Results = 1, r.Results[:1]
	md = r.Markdown(nil)
	for _, want := range []string{
		"## Forced GC (ms, the fastest collection)",
		"## CPU time of a forced GC (ms of process CPU per collection)",
		"## The fill: the slowest Set (ms)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the document of 1 run lacks %q:\n%s", want, md)
		}
	}
}

// With -forced 1 the method says "`runtime.GC()` once": it said
// "`runtime.GC()` 1 times".
func TestOneForcedCollectionSingular(t *testing.T) {
	r := &Report{Header: report.Header{GOMAXPROCS: 2}, Sizes: []int{0, 1000}, Template: methodJob(1), Rounds: 1}
	text := r.MethodText()
	if strings.Contains(text, "1 times") || !strings.Contains(text, "`runtime.GC()` once, or more (up to 25) until they have taken a second") {
		t.Errorf("one forced collection is not \"once\":\n%s", text)
	}
}
