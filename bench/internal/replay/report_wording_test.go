package replay

import (
	"strings"
	"testing"
	"time"
)

// resultOf is a replay of cache on a @10 with g goroutines.
func resultOf(trace, cache string, g int) Result {
	return Result{Trace: trace, Capacity: 10, Cache: cache, Goroutines: g, Gets: 100, Hits: 50, Sets: 50,
		GetTime: 10 * time.Microsecond, SetTime: 10 * time.Microsecond, Wall: time.Millisecond}
}

// A goroutine count with no result under a trace (not measured, or not
// in the JSON file) gets no "### N goroutines" heading there, and a
// trace with no result at all says so: every goroutine count got its
// heading under every trace, over an empty table.
func TestGoroutineHeadingWithoutRowsOmitted(t *testing.T) {
	r := &Report{Rounds: 3, Goroutines: []int{2, 8}, Caches: []string{"cachekit", "otter"},
		Traces: []TraceInfo{{Trace: Trace{"a", 10}}, {Trace: Trace{"b", 10}}, {Trace: Trace{"c", 10}}},
		Results: []Result{
			resultOf("a", "cachekit", 2), resultOf("a", "otter", 2),
			resultOf("a", "cachekit", 8), // nothing else at 8 on a; nothing on b
			resultOf("c", "otter", 2),    // nothing at 8 on c
		}}
	md := r.Markdown("")
	sec := func(trace string) string {
		_, after, _ := strings.Cut(md, "## "+trace+" @10\n\n")
		before, _, _ := strings.Cut(after, "\n## ")
		return before
	}
	if a := sec("a"); !strings.Contains(a, "### 2 goroutines") || !strings.Contains(a, "### 8 goroutines") {
		t.Errorf("a lost a measured goroutine count:\n%s", a)
	}
	if c := sec("c"); !strings.Contains(c, "### 2 goroutines") || strings.Contains(c, "### 8 goroutines") {
		t.Errorf("c, replayed with 2 goroutines only, does not have exactly that heading:\n%s", c)
	}
	b := sec("b")
	if strings.Contains(b, "###") {
		t.Errorf("b, never replayed, has headings over empty tables:\n%s", b)
	}
	if !strings.Contains(b, "No cache was replayed on this trace.") {
		t.Errorf("b's section does not say it was not replayed:\n%s", b)
	}
}

// With -goroutines 1 the headings read "### 1 goroutine", and with
// -rounds 1 the method says "(1 round, …)": they read "### 1 goroutines"
// (and the chart's title "with 1 goroutines") and "(1 rounds, …)".
func TestOneGoroutineOneRoundSingular(t *testing.T) {
	r := &Report{Rounds: 1, Goroutines: []int{1}, Caches: []string{"cachekit"},
		Traces: []TraceInfo{{Trace: Trace{"a", 10}}}, Results: []Result{resultOf("a", "cachekit", 1)}}
	md := r.Markdown("")
	for _, wrong := range []string{"1 goroutines", "1 rounds"} {
		if strings.Contains(md, wrong) {
			t.Errorf("the document says %q:\n%s", wrong, md)
		}
	}
	for _, want := range []string{"### 1 goroutine\n", "(1 round, caches interleaved, medians)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the document lacks %q:\n%s", want, md)
		}
	}
	if title := r.bars(1).Title; strings.Contains(title, "1 goroutines") {
		t.Errorf("the chart's title is %q", title)
	}
}

// The document says "In parentheses: the figure as a multiple of
// cachekit's" only in a run with cachekit: it said so always, even in a
// run without cachekit (-caches otter,theine), whose tables have no
// parentheses.
func TestMultipleOfCachekitOnlyWithCachekit(t *testing.T) {
	r := &Report{Rounds: 1, Goroutines: []int{2}, Caches: []string{"otter", "theine"},
		Traces: []TraceInfo{{Trace: Trace{"a", 10}}}, Results: []Result{resultOf("a", "otter", 2), resultOf("a", "theine", 2)}}
	md := r.Markdown("")
	if strings.Contains(md, "multiple of cachekit's") {
		t.Errorf("a run without cachekit explains ratios to cachekit:\n%s", md)
	}
	if strings.Contains(md, "(1.00×") || strings.Contains(md, "×)") {
		t.Errorf("unexpected ratios:\n%s", md)
	}
	r.Caches = append(r.Caches, "cachekit")
	r.Results = append(r.Results, resultOf("a", "cachekit", 2))
	if md := r.Markdown(""); !strings.Contains(md, "In parentheses: the figure as a multiple of cachekit's.") {
		t.Errorf("a run with cachekit does not explain the ratios:\n%s", md)
	}
}
