package main

import (
	"strings"
	"testing"
)

// bytesIEC picked its unit on the unrounded size: 1 GiB − 1 B printed
// "1024 MiB", 1 MiB − 1 B "1024 KiB". (Found by a review helper, as the
// next.)
func TestBytesIECUnitOfTheRoundedFigure(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{1<<30 - 1, "1.00 GiB"}, {1<<20 - 1, "1 MiB"}, {1<<30 - 1<<19 - 1, "1023 MiB"}, {1<<20 - 1<<9 - 1, "1023 KiB"}} {
		if got := bytesIEC(c.n); got != c.want {
			t.Errorf("bytesIEC(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// The 50 000 requests/s target was judged on best >= 50000*0.99 (a
// tolerance for a run paced at 50 000 whose achieved rate is a hair under
// it), so a -rates 49600 run that achieved 49 600 requests/s was reported
// "target 50 000, met". The run must be paced at 50 000 or more.
func TestBestRateBelowTargetNotMet(t *testing.T) {
	res := &result{Cores: 2, Config: config{Entries: 1000, Concurrency: 8, ValueSize: 100, MaxBytes: "1GiB"}, Phases: []*phase{
		testPhase(t, "articles", 10000, 10000, 3.5),
		testPhase(t, "sweep-49600", 49600, 49600, 5),
	}}
	md := render(res)
	want := "under 10 ms (with no error): 49,600 requests/s; target 50 000, **not met**"
	if !strings.Contains(md, want) {
		i := strings.Index(md, "- The highest rate run")
		t.Errorf("got %q, want it to end %q", md[i:i+strings.Index(md[i:], "\n")], want)
	}
}
