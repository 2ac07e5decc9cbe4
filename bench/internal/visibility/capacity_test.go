package visibility

import (
	"github.com/cachekit/cachekit/bench/internal/adapter"
	"testing"
)

// TestProbesBeyondCapacity: ProbeCapacity's doc promises that "nothing
// needs to be evicted: a miss is a write delayed, dropped or refused". With
// more probes than that, an LRU (which never drops a write) would be
// reported as having "never stored" the inserts it evicted: Measure
// refuses such a run.
func TestProbesBeyondCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("1M Sets")
	}
	rs, err := Measure(Config{Caches: []adapter.Info{lookup(t, "lru")}, ProbeGoroutines: []int{1},
		Probes: ProbeCapacity + 1000, ReplayCapacity: 16, ReplayGoroutines: 1, Rounds: 1})
	if err != nil {
		return // refused: fine
	}
	for _, p := range rs.Probes {
		if p.InsertLost != 0 || p.UpdateLost != 0 {
			t.Errorf("an LRU, which keeps every write, is reported as losing writes: %d inserts never stored, %d updates lost of %d probes",
				p.InsertLost, p.UpdateLost, p.Inserts)
		}
	}
}
