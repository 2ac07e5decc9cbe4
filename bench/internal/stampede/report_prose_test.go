package stampede

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// factoryNamed returns the named factory of Factories.
func factoryNamed(t *testing.T, name string) Factory {
	t.Helper()
	for _, f := range Factories() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no factory %q", name)
	return Factory{}
}

// targetRow is a row of one loader call per round, with the given p99
// and loader latency.
func targetRow(name string, refreshes bool, p99, load time.Duration) Row {
	return Row{Cache: name, Refreshes: refreshes, Rounds: 3, Calls: 1, MinCalls: 1, MaxCalls: 1, TotalCalls: 3,
		P50: p99, P99: p99, Max: p99, P99FromRelease: p99, LoadTime: load}
}

func markdown(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The Method prose said "a thousand goroutines" and "a 10 ms sleep"
// whatever -callers and -load were (here 20 callers and a 1ms loader); it
// now names r.Callers and r.LoadTime.
func TestMethodProseFollowsCallersAndLoad(t *testing.T) {
	ck := factoryNamed(t, "cachekit")
	r := &Report{Header: report.Header{Command: "go run ./bench/cmd/stampede -callers 20 -load 1ms"}, Rounds: 3, Callers: 20,
		LoadTime: time.Millisecond, Caches: []Factory{ck},
		Results: []Result{{Case: Cold, Rows: []Row{targetRow("cachekit", true, 1200*time.Microsecond, 1100*time.Microsecond)}}}}
	md := markdown(t, r)
	if !strings.Contains(md, "20 goroutines wait at a start barrier") {
		t.Fatalf("the method does not name the 20 callers:\n%s", md)
	}
	for _, wrong := range []string{"a thousand goroutines", "10 ms sleep"} {
		if strings.Contains(md, wrong) {
			t.Errorf("a run of 20 callers with a 1ms loader is described with %q", wrong)
		}
	}
}

// "What the numbers show" always explained "the singleflight row's"
// synchronous reload as the baseline, even when singleflight was not
// measured (-caches cachekit,otter) and no such row existed; the sentence
// now appears only for an expired-hot-key row that does not refresh, and
// names it.
func TestSingleflightSentenceWithoutSingleflight(t *testing.T) {
	load := 10 * time.Millisecond
	r := &Report{Header: report.Header{Command: "go run ./bench/cmd/stampede -caches cachekit,otter"}, Rounds: 3, Callers: 1000,
		LoadTime: load, Caches: []Factory{factoryNamed(t, "cachekit"), factoryNamed(t, "otter")},
		Results: []Result{
			{Case: Cold, Rows: []Row{targetRow("cachekit", true, 10500*time.Microsecond, 10200*time.Microsecond), targetRow("otter", true, 10500*time.Microsecond, 10200*time.Microsecond)}},
			{Case: Hot, Rows: []Row{targetRow("cachekit", true, 2*time.Microsecond, 10200*time.Microsecond), targetRow("otter", true, 3*time.Microsecond, 10200*time.Microsecond)}},
		}}
	if f := Findings(r); strings.Contains(f, "singleflight") {
		t.Errorf("the findings of a run without singleflight discuss the singleflight row:\n%s", f)
	}
}

// The expired-hot-key verdict compared p99 with a fixed 1ms, so with a
// loader faster than that (-load 500µs) a synchronous reload, whose every
// caller waits the whole load, was reported as meeting "no caller
// waits"; the target is now the lesser of HotTarget and half the load.
func TestHotVerdictWithAFastLoader(t *testing.T) {
	load := 500 * time.Microsecond
	r := &Report{Header: report.Header{Command: "go run ./bench/cmd/stampede -load 500µs"}, Rounds: 3, Callers: 1000,
		LoadTime: load, Caches: []Factory{factoryNamed(t, "cachekit"), factoryNamed(t, "singleflight")},
		Results: []Result{{Case: Hot, Rows: []Row{
			targetRow("cachekit", true, 2*time.Microsecond, 520*time.Microsecond),
			// Every caller waited for the synchronous reload: p50 = p99 ≈ the load.
			targetRow("singleflight", false, 560*time.Microsecond, 520*time.Microsecond),
		}}}}
	f := Findings(r)
	if !strings.Contains(f, "missed it: singleflight") {
		t.Errorf("a synchronous reload whose callers all waited the 0.5ms load is said to meet \"no caller waits\":\n%s", f)
	}
}

// TestFindingsDescribeTheCasesRun: a run of the expired hot key alone
// with a row that does not refresh states the hot-key target only, and
// the synchronous-reload sentence names that row.
func TestFindingsDescribeTheCasesRun(t *testing.T) {
	load := 10 * time.Millisecond
	r := &Report{Rounds: 3, Callers: 1000, LoadTime: load,
		Results: []Result{{Case: Hot, Rows: []Row{
			targetRow("cachekit", true, 2*time.Microsecond, load),
			targetRow("singleflight", false, load, load),
		}}}}
	f := Findings(r)
	if strings.Contains(f, "on a cold key") {
		t.Errorf("the findings of a hot-key run state the cold-key target:\n%s", f)
	}
	for _, want := range []string{"a median p99 under 1ms", "The singleflight row's expired hot key is a synchronous reload"} {
		if !strings.Contains(f, want) {
			t.Errorf("the findings lack %q:\n%s", want, f)
		}
	}
}
