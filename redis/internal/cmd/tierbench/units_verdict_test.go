package main

import (
	"strings"
	"testing"
	"time"
)

// ops picked its unit on the unrounded value, so a rate just under a
// unit's boundary printed in the lower unit, rounded up past it:
// ops(999_999) was "1000.0k" and ops(999.6) "1000". (The review helper's
// finding, as the three below.)
func TestOpsUnitOfTheRoundedFigure(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{999_999, "1.00M"}, {999_960, "1.00M"}, {999_949, "999.9k"}, {999.6, "1.0k"}, {999.4, "999"}} {
		if got := ops(c.x); got != c.want {
			t.Errorf("ops(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

// dur the same: a latency in [999.95 µs, 1 ms) printed "1000.0 µs".
func TestDurUnitOfTheRoundedFigure(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{999_960, "1.00 ms"}, {999_999, "1.00 ms"}, {999_949, "999.9 µs"}} {
		if got := dur(c.d); got != c.want {
			t.Errorf("dur(%d) = %q, want %q", c.d, got, c.want)
		}
	}
}

// The "within 10 % of Redis-only latency" verdict compared ratio − 1 with
// 0.1 in floating point: a cold p50 and p99 exactly 10 % above Redis only
// (1100 ns against 1000 ns in every round) gave 0.10000000000000009, and
// the document printed "p50 +10.0 %, p99 +10.0 %" and "not met".
func TestColdExactlyTenPercentIsWithin(t *testing.T) {
	saved := verdicts
	defer func() { verdicts = saved }()
	cold := []time.Duration{1100, 1100, 1100, 1100}
	redisOnly := []time.Duration{1000, 1000, 1000, 1000}
	verdicts = targets{warmRatio: map[int]float64{1: 1}, coldP50: map[int]float64{}, coldP99: map[int]float64{},
		loadsPerRound: map[int][]int64{1: {1}, 2: {2}}}
	// As run() computes them.
	verdicts.coldP50[1] = pairedRatio(durs(cold), durs(redisOnly)) - 1
	verdicts.coldP99[1] = pairedRatio(durs(cold), durs(redisOnly)) - 1
	md := document("")
	if !strings.Contains(md, "Tiered cold within 10 % of Redis-only latency: met** (p50 +10.0 %, p99 +10.0 % with 1 goroutine(s))") {
		i := strings.Index(md, "- **Tiered cold")
		t.Errorf("cold exactly 10 %% slower than Redis only: got %q, want met", md[i:i+strings.Index(md[i:], "\n")])
	}
}
