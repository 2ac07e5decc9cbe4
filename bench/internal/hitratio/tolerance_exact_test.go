package hitratio

import (
	"strings"
	"testing"
)

// A point exactly 0.1 below the best peer meets the criterion
// (at least the best peer minus 0.1), but the summary and the family
// bullets took the float difference (50.0 - 50.1 = -0.10000000000000142)
// for "more than 0.1 below", while the list of points behind did not: one
// report said both. Every comparison now goes through behind/ahead.
func TestExactToleranceIsWithin(t *testing.T) {
	const requests = 1000
	rs := &Results{Runs: 1, Traces: []TraceInfo{{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, Capacities: []int{10}}, Requests: requests, Unique: 100}}}
	// default 50.0%, otter 50.1%: default is exactly best peer − 0.1.
	for _, c := range []struct {
		name string
		hits uint64
	}{{NameDefault, 500}, {"otter", 501}} {
		k := contender(t, c.name)
		rs.Caches = append(rs.Caches, k)
		rs.Results = append(rs.Results, &Result{Trace: "t", Capacity: 10, Cache: c.name, Kind: k.Kind, Requests: requests, Hits: []uint64{c.hits}})
	}
	for _, s := range rs.Summaries() {
		if s.Cache == NameDefault && s.BelowPeer != 0 {
			t.Errorf("summary: default counted %d point(s) more than 0.1 below the best peer, though it is exactly 0.1 below (gap %v)", s.BelowPeer, s.WorstGap)
		}
	}
	if got, want := rs.defaultLine(rs.Points()), "default is at least the best peer minus 0.1 at 1 of 1 point"; !strings.Contains(got, want) {
		t.Errorf("defaultLine = %q, want it to say %q", got, want)
	}
	var b strings.Builder
	writeSummary(&b, rs)
	md := b.String()
	if strings.Contains(md, "At every point, default is at least the best peer minus 0.1 point.") && !strings.Contains(md, "| 0 | -0.10 (t @10) |") {
		t.Errorf("the summary table counts t @10 below the best peer − 0.1, the text under it says default is within at every point:\n%s", md)
	}
}
