package throughput

import (
	"strings"
	"testing"
	"time"
)

// TestOneRoundFigureTables: with -rounds 1, the hit-ratio and
// slowest-goroutine tables were still titled "(%, median)" and "(median)",
// though a single round has none (the rest of the document already named
// the figures as one round's).
func TestOneRoundFigureTables(t *testing.T) {
	cell := Cell{"evict-uniform", 90, 2}
	r := &Report{Command: "x", Date: "2026-01-01 00:00 UTC", Cores: 2, GOMAXPROCS: 2, Rounds: 1, Duration: "1s", Mults: []int{1},
		Caches:    []CacheInfo{{Name: Baseline, Bounded: true}, {Name: "xsync"}},
		Workloads: []WorkloadInfo{{Name: "evict-uniform", Description: "a stream", SetOnMiss: true, ReadPcts: []int{90}}},
		Results: Results([]Measurement{
			{Cell: cell, Cache: Baseline, Samples: []Sample{{Ops: 100, Gets: 90, Hits: 9, Elapsed: time.Second, Goroutines: 2, MinOps: 40}}},
			{Cell: cell, Cache: "xsync", Samples: []Sample{{Ops: 200, Gets: 180, Hits: 90, Elapsed: time.Second, Goroutines: 2, MinOps: 90}}},
		}),
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, r, nil); err != nil {
		t.Fatal(err)
	}
	var tables strings.Builder
	if err := WriteTables(&tables, r); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct{ name, doc string }{{"WriteMarkdown", md.String()}, {"WriteTables", tables.String()}} {
		name, doc := d.name, d.doc
		if !strings.Contains(doc, "Hit ratio of the Gets") || !strings.Contains(doc, "Operations of the slowest") {
			t.Fatalf("%s: the hit-ratio or slowest-goroutine table is missing:\n%s", name, doc)
		}
		for line := range strings.SplitSeq(doc, "\n") {
			if strings.Contains(strings.ToLower(line), "median") {
				t.Errorf("%s: a report of 1 round calls a figure a median: %q", name, line)
			}
		}
	}
}
