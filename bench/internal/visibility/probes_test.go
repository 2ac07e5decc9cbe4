package visibility

import (
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
)

// TestFewerProbesThanGoroutines: the goroutines share the probes, so
// with fewer probes than goroutines none of them writes anything and the
// tables show "0" misses for a run that did nothing. Measure refuses it.
func TestFewerProbesThanGoroutines(t *testing.T) {
	rs, err := Measure(Config{Caches: []adapter.Info{lookup(t, "xsync")}, ProbeGoroutines: []int{1, 4},
		Probes: 3, ReplayCapacity: 16, ReplayGoroutines: 1, Rounds: 1})
	if err == nil {
		for _, p := range rs.Probes {
			if p.Goroutines < 4 {
				continue
			}
			t.Errorf("Measure ran 3 probes on %d goroutines: %d inserts, %d updates, %d shared reads", p.Goroutines, p.Inserts, p.Updates, p.SharedReads)
		}
	}
	// As many probes as goroutines is a run.
	if _, err := Measure(Config{Caches: []adapter.Info{lookup(t, "xsync")}, ProbeGoroutines: []int{4},
		Probes: 4, ReplayCapacity: 16, ReplayGoroutines: 1, Rounds: 1}); err != nil {
		t.Errorf("4 probes on 4 goroutines: %v", err)
	}
}
