package throughput

import (
	"strings"
	"testing"
	"time"
)

// With -rounds 1 the method row said "1 rounds; in each, ... medians over
// the rounds", the figures were "the median of the rounds" and the charts'
// titles "median throughput of 1 rounds"; a single round, which has no
// median, is now named as one.
func TestMarkdownOfOneRound(t *testing.T) {
	r := &Report{Command: "x", Date: "2026-01-01 00:00 UTC", Cores: 2, GOMAXPROCS: 2, Rounds: 1, Duration: "1s", Mults: []int{1},
		Results: Results([]Measurement{{Cell: Cell{"w", 100, 2}, Cache: "xsync", Samples: []Sample{{Ops: 10, Elapsed: time.Second}}}})}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, bad := range []string{"1 rounds", "medians over the rounds", "the median of the rounds"} {
		if strings.Contains(md, bad) {
			t.Errorf("a report of one round says %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "| method | 1 round: every cache runs every cell once for 1s") {
		t.Errorf("the method row does not say there was one round:\n%s", md)
	}
	if got, want := r.ofRounds("throughput"), "throughput of 1 round"; got != want {
		t.Errorf("chart title's end with one round = %q, want %q", got, want)
	}
	r.Rounds = 5
	if got, want := r.ofRounds("throughput"), "median throughput of 5 rounds"; got != want {
		t.Errorf("chart title's end with 5 rounds = %q, want %q", got, want)
	}
}
