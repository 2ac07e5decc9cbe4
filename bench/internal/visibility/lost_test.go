package visibility

import (
	"strings"
	"sync"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
)

// firstWriteWins keeps the first value Set for a key and ignores every
// later Set of it: a cache that loses every update.
type firstWriteWins struct {
	mu sync.Mutex
	m  map[uint64]uint64
}

func (c *firstWriteWins) Name() string { return "first-write-wins" }
func (c *firstWriteWins) Get(k uint64) (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}
func (c *firstWriteWins) Set(k, v uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		c.m[k] = v
	}
}
func (c *firstWriteWins) Close() {}

// TestUpdateLostIsAShareOfTheKeys: a cache that loses the last update of
// every key it was given must show 100% in the "update: lost" column, not
// the number of keys over the number of updates (256 keys per goroutine
// against 2,000 updates here).
func TestUpdateLostIsAShareOfTheKeys(t *testing.T) {
	info := adapter.Info{Name: "first-write-wins", Bounded: true,
		New: func(int) adapter.Cache { return &firstWriteWins{m: map[uint64]uint64{}} }}
	p := RunProbe(info, 1, 2000)
	if p.UpdateLost != updateKeys {
		t.Fatalf("UpdateLost = %d, want every one of the %d keys", p.UpdateLost, updateKeys)
	}
	rep := Report{ProbeGoroutines: []int{1}, Caches: []string{info.Name}, Configs: []string{""},
		Results: &Results{Probes: []Probe{p}}}
	table := rep.ProbeTables("#")
	var row string
	for line := range strings.SplitSeq(table, "\n") {
		if strings.HasPrefix(line, "| first-write-wins |") {
			row = line
		}
	}
	cells := strings.Split(strings.Trim(row, "|"), "|")
	if len(cells) < 6 {
		t.Fatalf("no row for the cache in\n%s", table)
	}
	if lost := strings.TrimSpace(cells[5]); lost != "100.000% (256)" {
		t.Errorf("update: lost = %q, want %q (every updated key lost)\n%s", lost, "100.000% (256)", table)
	}
}

// TestReplayWithOneGoroutineRunsOnce: -replay-goroutines 1 makes the
// "concurrent" replay the single-threaded one; each round must replay
// each cache once, not twice (which makes the 1-goroutine median one of
// 2×rounds runs and the table show the same column twice).
func TestReplayWithOneGoroutineRunsOnce(t *testing.T) {
	caches := []adapter.Info{lookup(t, "xsync")}
	rs, err := Measure(Config{Caches: caches, ProbeGoroutines: []int{1}, Probes: 10,
		ReplayCaches: caches, ReplayCapacity: 100, ReplayGoroutines: 1, Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Replays) != 3 {
		t.Errorf("%d replays in 3 rounds of one cache with 1 goroutine, want 3", len(rs.Replays))
	}
}
