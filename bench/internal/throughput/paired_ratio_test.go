package throughput

import (
	"testing"
	"time"
)

// samples returns one Sample per figure, each that many operations in a
// second.
func samples(ops ...uint64) []Sample {
	var s []Sample
	for _, n := range ops {
		s = append(s, Sample{Ops: n, Elapsed: time.Second})
	}
	return s
}

// A cache's ratio to cachekit pairs the rounds: on a machine whose speed
// jumps between rounds, the two medians may come from rounds of different
// speeds. Here xsync ran at cachekit's speed in every round but one
// (ratios 1.0, 1.1, 0.9, 1.0 and 3.0): the median of the rounds' ratios is
// 1.0, where the ratio of the medians (40 over 20) said 2.0.
func TestRatioPairsTheRounds(t *testing.T) {
	cell := Cell{"w", 75, 2}
	rs := Results([]Measurement{
		{Cell: cell, Cache: Baseline, Samples: samples(40, 20, 20, 40, 10)},
		{Cell: cell, Cache: "xsync", Samples: samples(40, 22, 18, 40, 30)},
	})
	if rs[1].MedianOpsPerSec != 30 || rs[0].MedianOpsPerSec != 20 {
		t.Fatalf("medians %v and %v, want 20 and 30", rs[0].MedianOpsPerSec, rs[1].MedianOpsPerSec)
	}
	if got := *rs[1].RatioToBaseline; got != 1 {
		t.Errorf("xsync's ratio to cachekit = %v, want 1 (the median of the rounds' ratios)", got)
	}
	if got := *rs[0].RatioToBaseline; got != 1 {
		t.Errorf("cachekit's ratio to itself = %v", got)
	}
	// A report read back from JSON written before the paired ratios gets
	// them again.
	old := 1.5
	rs[1].RatioToBaseline = &old
	SetRatios(rs)
	if got := *rs[1].RatioToBaseline; got != 1 {
		t.Errorf("after SetRatios, xsync's ratio = %v, want 1", got)
	}
	// Rounds that do not pair up (a cache measured in fewer rounds) fall
	// back to the ratio of the medians.
	rs[1].OpsPerSec = rs[1].OpsPerSec[:4]
	rs[1].MedianOpsPerSec = 31
	SetRatios(rs)
	if got := *rs[1].RatioToBaseline; got != 31.0/20 {
		t.Errorf("unpaired rounds: ratio %v, want %v", got, 31.0/20)
	}
}
