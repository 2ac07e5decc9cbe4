package hitratio

import (
	"strings"
	"testing"
)

// TestSummaryTextBestMeanTies checks that the sentence after the
// summary table names every cache whose mean equals the best at the
// report's precision, as the table bolds them, whichever comes first.
func TestSummaryTextBestMeanTies(t *testing.T) {
	rs := &Results{Runs: 1, Traces: []TraceInfo{{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, Capacities: []int{10}}, Requests: 100000, Unique: 10}}}
	for name, hits := range map[string]uint64{NameDefault: 50001, "otter": 50004} {
		c := contender(t, name)
		rs.Caches = append(rs.Caches, c)
		rs.Results = append(rs.Results, &Result{Trace: "t", Capacity: 10, Cache: name, Kind: c.Kind, Requests: 100000, Hits: []uint64{hits}})
	}
	// Report order: default (50.001%) before otter (50.004%).
	if rs.Caches[0].Name != NameDefault {
		rs.Caches[0], rs.Caches[1] = rs.Caches[1], rs.Caches[0]
	}
	var b strings.Builder
	writeSummary(&b, rs)
	md := b.String()
	if !strings.Contains(md, "| default | ours | **50.00** |") || !strings.Contains(md, "| otter | peer | **50.00** |") {
		t.Fatalf("the table does not bold both means:\n%s", md)
	}
	if want := "The best mean is default and otter's (50.00)."; !strings.Contains(md, want) {
		t.Errorf("summary text does not say %q:\n%s", want, summaryText(rs, rs.Summaries()))
	}
}

func contender(t *testing.T, name string) Contender {
	t.Helper()
	for _, c := range Contenders() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no contender %q", name)
	return Contender{}
}

// TestSummaryGapNoNegativeZero: a mean gap that rounds to zero from
// below (OPT-bypass a few thousandths of a point above OPT) is printed
// "0.00"; hit-ratio-synthetic.md showed "-0.00".
func TestSummaryGapNoNegativeZero(t *testing.T) {
	rs := &Results{Runs: 1, Traces: []TraceInfo{{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, Capacities: []int{10}}, Requests: 100000, Unique: 10}}}
	for _, name := range []string{NameOPTBypass, NameOPT} {
		c := contender(t, name)
		rs.Caches = append(rs.Caches, c)
		hits := uint64(60000)
		if name == NameOPTBypass {
			hits = 60003 // 0.003 points above OPT
		}
		rs.Results = append(rs.Results, &Result{Trace: "t", Capacity: 10, Cache: name, Kind: c.Kind, Requests: 100000, Hits: []uint64{hits}})
	}
	var b strings.Builder
	writeSummary(&b, rs)
	if md := b.String(); !strings.Contains(md, "| OPT-bypass | optimum | 60.00 |  | 0.00 | 0.00 |") {
		t.Errorf("OPT-bypass's row is not 0.00 / 0.00:\n%s", md)
	}
}

// TestMethodScheduling: with -isolate, the replays run in parallel are
// those of every cache without goroutines of its own, otter among them,
// which is replayed several times because it is not deterministic: the
// method must not call them "the deterministic caches".
func TestMethodScheduling(t *testing.T) {
	rs := &Results{Runs: 3}
	for _, name := range []string{NameDefault, NameCache, "otter"} {
		rs.Caches = append(rs.Caches, contender(t, name))
	}
	var b strings.Builder
	writeMethod(&b, rs, Meta{Parallel: 2, Isolate: true})
	md := b.String()
	if !strings.Contains(md, "(cache, otter) are replayed 3 times") {
		t.Fatalf("otter is not among the repeated caches:\n%s", md)
	}
	if strings.Contains(md, "the deterministic caches were replayed") {
		t.Errorf("the method calls otter, replayed in parallel, deterministic:\n%s", md)
	}
}
