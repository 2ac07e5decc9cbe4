package stampede

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// roundOf is a round with the given loader calls and latencies of 1ms.
func roundOf(calls int64) Round {
	return Round{Calls: calls, Latencies: []time.Duration{time.Millisecond}, FromRelease: []time.Duration{time.Millisecond}, LoadTime: time.Millisecond}
}

// The median loader calls per round over an even number of rounds is the
// mean of the middle two, 1.5 for 1 and 2 calls ("1.5 (1–2)"): it was
// computed in int64 and truncated to 1 (the table's "1 (1–2)", as if
// most rounds had made one call).
func TestMedianCallsNotTruncated(t *testing.T) {
	row := Summarize("c", true, []Round{roundOf(1), roundOf(2)})
	if row.Calls != 1.5 {
		t.Errorf("the median of 1 and 2 loader calls is %v, want 1.5", row.Calls)
	}
	if got := callsText(row); got != "1.5 (1–2)" {
		t.Errorf("the table's loader calls read %q, want %q", got, "1.5 (1–2)")
	}
	row = Summarize("c", true, []Round{roundOf(3), roundOf(1), roundOf(2)})
	if row.Calls != 2 || callsText(row) != "2 (1–3)" {
		t.Errorf("the median of 1, 2 and 3 calls: %v, %q; want 2, \"2 (1–3)\"", row.Calls, callsText(row))
	}
	row = Summarize("c", true, []Round{roundOf(1), roundOf(1)})
	if callsText(row) != "1" {
		t.Errorf("one call in every round reads %q, want \"1\"", callsText(row))
	}
}

// The findings agree with the count of loader calls ("1 loader call per
// round", "20 loader calls per round"), and with -rounds 1 the method
// says "there is 1": the findings said "1 loader call(s) per round", and
// the method "there are 1".
func TestLoaderCallsAndRoundsAgree(t *testing.T) {
	load := 10 * time.Millisecond
	many := targetRow("singleflight", false, load, load)
	many.Calls, many.MinCalls, many.MaxCalls = 20, 20, 20
	r := &Report{Header: report.Header{Command: "x"}, Rounds: 1, Callers: 1000, LoadTime: load,
		Results: []Result{{Case: Hot, Rows: []Row{targetRow("sync", false, load, load), many}}}}
	f := Findings(r)
	if strings.Contains(f, "call(s)") {
		t.Errorf("the findings say \"call(s)\":\n%s", f)
	}
	for _, want := range []string{"sync (1 loader call per round,", "singleflight (20 loader calls per round,"} {
		if !strings.Contains(f, want) {
			t.Errorf("the findings lack %q:\n%s", want, f)
		}
	}
	md := markdown(t, r)
	if strings.Contains(md, "there are 1,") {
		t.Errorf("the method says \"there are 1\":\n%s", md)
	}
	if !strings.Contains(md, "there is 1,") {
		t.Errorf("the method does not say \"there is 1\":\n%s", md)
	}
}

// The findings name the header's core count (here "on 64 cores"): they
// said the callers ran "on a few cores" whatever the machine.
func TestFindingsNameTheCores(t *testing.T) {
	load := 10 * time.Millisecond
	r := &Report{Header: report.Header{Command: "x", Cores: 64}, Rounds: 3, Callers: 1000, LoadTime: load,
		Results: []Result{{Case: Cold, Rows: []Row{targetRow("cachekit", true, load, load)}}}}
	f := Findings(r)
	if strings.Contains(f, "a few cores") || !strings.Contains(f, "With 1000 goroutines on 64 cores,") {
		t.Errorf("the findings do not name the 64 cores:\n%s", f)
	}
}
