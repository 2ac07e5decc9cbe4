package stampede

import (
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/report"
)

// A run started on a busy machine (1-minute load average at least half the
// cores) is flagged under the header, as the other reports do: loading.md
// was measured at a load average of 2.2 on 2 cores and said nothing of it.
func TestMarkdownWarnsOfABusyMachine(t *testing.T) {
	load := 10 * time.Millisecond
	r := &Report{Header: report.Header{Command: "x", Cores: 2, LoadBefore: "2.22, 4.95, 5.19", LoadAfter: "2.04, 4.87, 5.16"},
		Rounds: 3, Callers: 1000, LoadTime: load,
		Results: []Result{{Case: Cold, Rows: []Row{targetRow("cachekit", true, load, load)}}}}
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	want := "after\n\n> **Warning.** The 1-minute load average was 2.22 when the run started, on 2 cores: " +
		"other work shared the machine, so latencies are noisy. Regenerate on a quiet machine " +
		"before drawing conclusions from small differences.\n\n## Method"
	if !strings.Contains(md, want) {
		t.Errorf("the report does not warn of the busy machine under its header:\n%s", md)
	}
	r.LoadBefore = "0.30, 0.20, 0.10"
	b.Reset()
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); strings.Contains(md, "Warning") || !strings.Contains(md, "after\n\n## Method") {
		t.Errorf("a quiet machine's report:\n%s", md)
	}
}
