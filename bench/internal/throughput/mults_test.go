package throughput

import (
	"testing"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

// TestMeasureRefusesNonPositiveMults: a goroutine multiple of 0 (or
// less) is refused; Measure ran the cells with no goroutine at all,
// timing nothing.
func TestMeasureRefusesNonPositiveMults(t *testing.T) {
	info, _ := adapter.Lookup("xsync")
	w, err := workload.ByName("getput", workload.EvictCapacity)
	if err != nil {
		t.Fatal(err)
	}
	w.ReadPcts = w.ReadPcts[:1]
	for _, m := range []int{0, -1} {
		ms, err := Measure(Config{Caches: []adapter.Info{info}, Workloads: []*workload.Workload{w}, Mults: []int{m}, Rounds: 1, Duration: time.Millisecond})
		if err == nil {
			t.Errorf("Measure with multiple %d succeeded: %+v", m, ms)
		}
	}
}
