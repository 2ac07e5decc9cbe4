package load

import (
	"strings"
	"testing"
)

// The target line printed a rate of a million requests per second as
// "1e+06 req/s" (%g) and one worker as "1 workers".
func TestWriteTextRateAndWorkersSpelledOut(t *testing.T) {
	for _, tc := range []struct {
		rate        float64
		concurrency int
		want        string
	}{
		{1e6, 1, "1000000 req/s, 1 worker\n"},
		{12500.5, 2, "12500.5 req/s, 2 workers\n"},
		{0, 16, "unpaced, 16 workers\n"},
	} {
		rep := &Report{Mode: ModeGet, URL: "http://x", Loop: "open", TargetRate: tc.rate, Concurrency: tc.concurrency}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(b.String(), "\n")
		if !strings.HasSuffix(first+"\n", tc.want) {
			t.Errorf("rate %g, %d workers: target line %q, want it to end with %q", tc.rate, tc.concurrency, first, tc.want)
		}
	}
}

// A write ratio of 1e-7 was printed as "writes 1e-05%".
func TestWriteTextSmallWriteRatio(t *testing.T) {
	rep := &Report{Mode: ModeAPI, URL: "http://x", Loop: "closed", WriteRatio: 1e-7, WriteMethod: "PUT", ValueSize: 10}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "writes 0.00001% by PUT") {
		t.Errorf("a write ratio of 1e-7 printed as:\n%s", out)
	}
}
