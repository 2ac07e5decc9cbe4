package visibility

import (
	"strings"
	"testing"
)

// replayOf is a replay of cache with g goroutines: hits of 1,000,000
// requests.
func replayOf(cache string, g int, hits uint64) Replay {
	return Replay{Cache: cache, Goroutines: g, Requests: 1_000_000, Hits: hits}
}

// The replay table prints a difference that rounds to zero as "0.00",
// whether from below (a hundredth of a hundredth of a point) or an exact
// tie: it was printed with %+.2f, so the first read "-0.00" and the tie
// "+0.00".
func TestReplayDifferenceNoNegativeZero(t *testing.T) {
	rep := Report{Rounds: 1, ReplayGoroutines: 4, ReplayCaches: []string{"a", "b", "c"},
		Results: &Results{Replays: []Replay{
			replayOf("a", 1, 500_000), replayOf("a", 4, 499_999), // -0.0001 points
			replayOf("b", 1, 500_000), replayOf("b", 4, 500_000), // 0
			replayOf("c", 1, 500_000), replayOf("c", 4, 490_000), // -1 point
		}}}
	table := rep.ReplayTable()
	for _, want := range []string{"| a | 50.00 | 50.00 | 0.00 |", "| b | 50.00 | 50.00 | 0.00 |", "| c | 50.00 | 49.00 | -1.00 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("the replay table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "-0.00") || strings.Contains(table, "+0.00") {
		t.Errorf("the replay table prints a signed zero:\n%s", table)
	}
}

// A goroutine count of -probe-goroutines at which no cache's probes were
// measured (none in the JSON file) gets no "### N goroutines" heading:
// it still got one, over an empty table.
func TestProbeHeadingWithoutRowsOmitted(t *testing.T) {
	rep := Report{Rounds: 1, ProbeGoroutines: []int{1, 4}, Caches: []string{"a"},
		Results: &Results{Probes: []Probe{probeOf("a", 1, 0)}}}
	tables := rep.ProbeTables("###")
	if !strings.Contains(tables, "### 1 goroutine\n") {
		t.Fatalf("the measured goroutine count has no table:\n%s", tables)
	}
	if strings.Contains(tables, "### 4 goroutines") {
		t.Errorf("a heading with no measured row:\n%s", tables)
	}
}

// With -rounds 1 the prose says "summed over 1 round" and "Medians of 1
// round": it said "summed over 1 rounds" and "Medians of 1 rounds".
func TestOneRoundIsSingular(t *testing.T) {
	rep := Report{Rounds: 1, Probes: 1000, ProbeGoroutines: []int{1}, ReplayCapacity: 16, ReplayGoroutines: 1,
		Caches: []string{"a"}, Configs: []string{"c"}, ReplayCaches: []string{"a"},
		Results: &Results{Probes: []Probe{probeOf("a", 1, 0)}, Replays: []Replay{replayOf("a", 1, 10)}}}
	md := rep.Markdown("")
	if strings.Contains(md, "1 rounds") {
		t.Errorf("the document says \"1 rounds\":\n%s", md)
	}
	for _, want := range []string{"Figures are summed over 1 round (a fresh cache per run).", "Medians of 1 round."} {
		if !strings.Contains(md, want) {
			t.Errorf("the document lacks %q:\n%s", want, md)
		}
	}
}
