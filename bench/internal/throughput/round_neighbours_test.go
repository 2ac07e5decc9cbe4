package throughput

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/workload"
)

// Measure's doc comment said the caches' order rotated "so that no cache
// always runs first (on a fresh machine) or right after the same
// neighbour", but a rotation keeps the cyclic order, so every cache always
// ran right after the same cache. Odd rounds (counted from 0) now go
// through the caches backward, so that, with three caches or more, each
// runs after a different neighbour from one round to the next.
func TestMeasureNoCacheAlwaysAfterSameNeighbour(t *testing.T) {
	w, err := workload.Evict(workload.Uniform, 1000)
	if err != nil {
		t.Fatal(err)
	}
	w.ReadPcts = []int{100}
	names := []string{"xsync", "rwmutex-map", "sync.Map"}
	const rounds = 6
	var progress bytes.Buffer
	if _, err := Measure(Config{Caches: lookup(t, names...), Workloads: []*workload.Workload{w}, Mults: []int{1},
		Rounds: rounds, Duration: time.Millisecond, Seed: 1, Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	// The runs in the order they ran; one cell, so every run of a round
	// is of the same cell, and the cache before one in its round is the
	// neighbour it ran right after.
	type run struct {
		round int
		cache string
	}
	var runs []run
	for line := range strings.Lines(progress.String()) {
		var r, n, pct, g int
		var wl, cache string
		if _, err := fmt.Sscanf(line, "round %d/%d %s %d%% reads %d goroutines %s", &r, &n, &wl, &pct, &g, &cache); err != nil {
			t.Fatalf("progress line %q: %v", line, err)
		}
		runs = append(runs, run{r, cache})
	}
	before := map[string]map[string]int{} // cache → the caches it ran right after, in its cell
	first := map[string]int{}             // cache → the rounds it ran first in
	for i := range runs {
		if i == 0 || runs[i].round != runs[i-1].round {
			first[runs[i].cache]++
			continue
		}
		if before[runs[i].cache] == nil {
			before[runs[i].cache] = map[string]int{}
		}
		before[runs[i].cache][runs[i-1].cache]++
	}
	for _, c := range names {
		if len(before[c]) == 1 {
			t.Errorf("over %d rounds, %s ran right after %v every time it did not run first", rounds, c, before[c])
		}
		if first[c] != rounds/len(names) {
			t.Errorf("over %d rounds, %s ran first %d times, want %d (the first cache moves on by one each round)", rounds, c, first[c], rounds/len(names))
		}
	}
}
