package articles

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// articles.md's title said "1M structs", its text "a string of 9 to 18
// bytes" and "(GOMAXPROCS)" whatever -entries and -goroutines the run used.
// They now come from the report.
func TestTextStatesTheRunsFlags(t *testing.T) {
	r := Report{Header: report.Header{GOMAXPROCS: 2}, Entries: 1000, Goroutines: 8, Duration: "1s", Rounds: 1}
	md := r.Markdown(nil)
	for _, bad := range []string{"1M structs", "9 to 18 bytes", "(GOMAXPROCS)"} {
		if strings.Contains(md, bad) {
			t.Errorf("a run of 1,000 entries with 8 goroutines on GOMAXPROCS 2 says %q", bad)
		}
	}
	for _, want := range []string{"1,000 structs", "9 to 15 bytes", "8 goroutines reading"} {
		if !strings.Contains(md, want) {
			t.Errorf("the document does not say %q:\n%s", want, md[:min(len(md), 1500)])
		}
	}
	r.Goroutines = 2
	if md := r.Markdown(nil); !strings.Contains(md, "2 goroutines (GOMAXPROCS)") {
		t.Errorf("with GOMAXPROCS goroutines the document does not say so")
	}
}
