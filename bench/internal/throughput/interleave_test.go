package throughput

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/workload"
)

// TestMeasureInterleavesRounds: the rounds are interleaved (every run
// of round 1, every cell and every cache, before any run of round 2), and
// within each cell of round r the caches run from the r-th (modulo their
// number) forward through the list in odd rounds and backward in even
// ones, so that no cache always runs first or after the same neighbour
// (docs/benchmarks/README.md, "Timing (the command)"). The order is read
// from the progress lines, one per run, in the order of the runs.
func TestMeasureInterleavesRounds(t *testing.T) {
	w, err := workload.Evict(workload.Uniform, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.ReadPcts = []int{100, 50}
	names := []string{"xsync", "rwmutex-map", "sync.Map"}
	caches := lookup(t, names...)
	const rounds = 4
	var progress bytes.Buffer
	ms, err := Measure(Config{Caches: caches, Workloads: []*workload.Workload{w}, Mults: []int{1, 2},
		Rounds: rounds, Duration: time.Millisecond, Seed: 1, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if len(m.Samples) != rounds {
			t.Errorf("%+v %s: %d samples, want one per round (%d)", m.Cell, m.Cache, len(m.Samples), rounds)
		}
	}
	type run struct {
		round int
		cell  string
		cache string
	}
	var runs []run
	for line := range strings.Lines(progress.String()) {
		var r, n, pct, g int
		var wl, cache string
		if _, err := fmt.Sscanf(line, "round %d/%d %s %d%% reads %d goroutines %s", &r, &n, &wl, &pct, &g, &cache); err != nil {
			t.Fatalf("progress line %q: %v", line, err)
		}
		runs = append(runs, run{r, fmt.Sprintf("%s/%d/%d", wl, pct, g), cache})
	}
	if want := rounds * len(w.ReadPcts) * 2 * len(names); len(runs) != want {
		t.Fatalf("%d runs, want %d", len(runs), want)
	}
	// Rounds do not overlap: the round numbers never go down.
	for i := 1; i < len(runs); i++ {
		if runs[i].round < runs[i-1].round {
			t.Fatalf("run %d is of round %d after one of round %d: rounds are not interleaved", i, runs[i].round, runs[i-1].round)
		}
	}
	// Within a round, each cell runs every cache once, consecutively, from
	// the round's first cache, forward in odd rounds, backward in even.
	per := len(names)
	for i := 0; i < len(runs); i += per {
		group := runs[i : i+per]
		var order []string
		for _, r := range group {
			if r.round != group[0].round || r.cell != group[0].cell {
				t.Fatalf("runs %d–%d mix cells or rounds: %+v", i, i+per-1, group)
			}
			order = append(order, r.cache)
		}
		k := (group[0].round - 1) % per
		want := slices.Concat(names[k:], names[:k])
		if group[0].round%2 == 0 {
			slices.Reverse(want[1:])
		}
		if !slices.Equal(order, want) {
			t.Errorf("round %d, cell %s: caches ran in order %v, want %v", group[0].round, group[0].cell, order, want)
		}
	}
}
