package visibility

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/report"
)

func lookup(t *testing.T, name string) adapter.Info {
	t.Helper()
	info, ok := adapter.Lookup(name)
	if !ok {
		t.Fatalf("no adapter %q", name)
	}
	return info
}

// TestProbeOfAMap checks the probe's bookkeeping on a map, which never
// misses: every count but the totals is zero.
func TestProbeOfAMap(t *testing.T) {
	for _, g := range []int{1, 3} {
		p := RunProbe(lookup(t, "xsync"), g, 3000)
		want := uint64(3000 / g * g)
		if p.Inserts != want || p.Updates != want {
			t.Errorf("%d goroutines: %d inserts, %d updates; want %d", g, p.Inserts, p.Updates, want)
		}
		if p.InsertMissed+p.InsertWrong+p.InsertLost+p.UpdateMissed+p.UpdateStale+p.UpdateLost+p.SharedMissed != 0 {
			t.Errorf("a map missed: %+v", p)
		}
		if (g > 1) != (p.SharedReads > 0) {
			t.Errorf("%d goroutines: %d shared reads", g, p.SharedReads)
		}
	}
}

// TestProbeOfCaches checks that no cache returns a wrong value and that
// the synchronous ones find every Set.
func TestProbeOfCaches(t *testing.T) {
	for _, info := range adapter.Throughput() {
		p := RunProbe(info, 2, 2000)
		t.Logf("%+v", p)
		if p.InsertWrong != 0 || p.UpdateStale > p.Updates {
			t.Errorf("%s: %+v", info.Name, p)
		}
		if p.InsertMissed > p.Inserts || p.InsertLost > p.Inserts || p.UpdateLost > p.Updates {
			t.Errorf("%s: counts above the totals: %+v", info.Name, p)
		}
		if info.Name == "lru" || info.Name == "rwmutex-map" {
			if p.InsertMissed+p.InsertLost+p.UpdateMissed+p.UpdateStale+p.UpdateLost != 0 {
				t.Errorf("%s, which writes synchronously under a lock, missed: %+v", info.Name, p)
			}
		}
	}
}

func TestReplay(t *testing.T) {
	keys := make([]uint64, 20000)
	for i := range keys {
		keys[i] = mix(uint64(i*i) % 3001)
	}
	distinct := map[uint64]bool{}
	for _, k := range keys {
		distinct[k] = true
	}
	one := RunReplay(lookup(t, "xsync"), keys, 100, 1)
	if want := uint64(len(keys) - len(distinct)); one.Hits != want || one.Requests != uint64(len(keys)) {
		t.Errorf("an unbounded map replayed by one goroutine hits %d of %d, want %d", one.Hits, one.Requests, want)
	}
	four := RunReplay(lookup(t, "xsync"), keys, 100, 4)
	if four.Hits > one.Hits || four.Requests != one.Requests {
		t.Errorf("4 goroutines hit %d, more than the %d possible", four.Hits, one.Hits)
	}
	if r := RunReplay(lookup(t, "lru"), keys, 100, 1); r.HitRatio() >= one.HitRatio() {
		t.Errorf("an LRU of 100 entries hits %.3f, not less than an unbounded map's %.3f", r.HitRatio(), one.HitRatio())
	}
	if (Replay{}).HitRatio() != 0 {
		t.Error("an empty replay has a hit ratio")
	}
}

func TestMeasureAndReport(t *testing.T) {
	caches := []adapter.Info{lookup(t, "cachekit"), lookup(t, "xsync")}
	rs, err := Measure(Config{Caches: caches, ProbeGoroutines: []int{1, 2}, Probes: 1000,
		ReplayCaches: caches[:1], ReplayCapacity: 1000, ReplayGoroutines: 4, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Probes) != 2*2*2 || len(rs.Replays) != 2*2 {
		t.Fatalf("%d probes, %d replays", len(rs.Probes), len(rs.Replays))
	}
	rep := Report{Header: report.Header{Command: "go run ./bench/cmd/visibility"}, Rounds: 2, Probes: 1000,
		ProbeGoroutines: []int{1, 2}, ReplayCapacity: 1000, ReplayGoroutines: 4,
		Caches: []string{"cachekit", "xsync"}, ReplayCaches: []string{"cachekit"}, Configs: []string{"a", "b"}, Results: rs}
	if s, ok := rep.probeSum("xsync", 2); !ok || s.Inserts != 2000 {
		t.Errorf("probeSum = %+v, %v", s, ok)
	}
	dir := t.TempDir()
	name, err := rep.Chart(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Error(err)
	}
	md := rep.Markdown(name)
	for _, want := range []string{"### 1 goroutine\n", "### 2 goroutines\n", "| xsync | 0 | 0 | 0 | 0 | 0 | 0 |", "| cachekit |", "4 goroutines: hit %"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if _, err := Measure(Config{Rounds: 0}); err == nil {
		t.Error("Measure ran zero rounds")
	}
}

func TestShare(t *testing.T) {
	if share(0, 10) != "0" || share(1, 8) != "12.500% (1)" {
		t.Errorf("share: %q, %q", share(0, 10), share(1, 8))
	}
}
