package visibility

import (
	"strings"
	"testing"
)

// probeOf is a probe of cache with g goroutines in which missed of 1000
// new keys were missed.
func probeOf(cache string, g int, missed uint64) Probe {
	return Probe{Cache: cache, Goroutines: g, Inserts: 1000, InsertMissed: missed, Updates: 1000, UpdatedKeys: 256}
}

// The probe section always said "The unbounded maps are there as the
// reference: a map never misses", even when no map was measured (-caches
// cachekit,ristretto); the sentence now needs a measured unbounded cache,
// and claims "never misses" only when none of them missed.
func TestMapsReferenceWithoutMaps(t *testing.T) {
	rep := Report{Rounds: 1, Probes: 1000, ProbeGoroutines: []int{1}, ReplayCapacity: 16, ReplayGoroutines: 2,
		Caches: []string{"cachekit", "ristretto"}, Configs: []string{"c", "r"}, ReplayCaches: []string{"cachekit", "ristretto"},
		Results: &Results{
			Probes: []Probe{probeOf("cachekit", 1, 0), probeOf("ristretto", 1, 1000)},
			Replays: []Replay{{Cache: "cachekit", Goroutines: 1, Requests: 10, Hits: 5}, {Cache: "cachekit", Goroutines: 2, Requests: 10, Hits: 5},
				{Cache: "ristretto", Goroutines: 1, Requests: 10, Hits: 4}, {Cache: "ristretto", Goroutines: 2, Requests: 10, Hits: 3}},
		}}
	if md := rep.Markdown(""); strings.Contains(md, "The unbounded maps are there as the reference") {
		t.Errorf("the document names the unbounded maps as the reference though none was measured:\n%s", md)
	}
	rep.Caches = append(rep.Caches, "xsync")
	rep.Results.Probes = append(rep.Results.Probes, probeOf("xsync", 1, 0))
	if md := rep.Markdown(""); !strings.Contains(md, "The unbounded maps are there as the reference: a map never misses.") {
		t.Errorf("the document does not name the measured map xsync as the reference:\n%s", md)
	}
	rep.Results.Probes[2].InsertMissed = 3
	md := rep.Markdown("")
	if strings.Contains(md, "never misses") || !strings.Contains(md, "but here xsync missed too") {
		t.Errorf("a map that missed 3 new keys is said never to miss:\n%s", md)
	}
}

// With no replay caches (-caches xsync: the default replays only bounded
// ones) the document still had a "Hit ratio of a concurrent replay"
// section describing a replay "through a fresh cache of capacity …", over
// an empty table; the section now says that no cache was replayed.
func TestReplaySectionWithoutReplays(t *testing.T) {
	rep := Report{Rounds: 1, Probes: 1000, ProbeGoroutines: []int{1}, ReplayCapacity: 16, ReplayGoroutines: 2,
		Caches: []string{"xsync"}, Configs: []string{"x"},
		Results: &Results{Probes: []Probe{probeOf("xsync", 1, 0)}, StreamLen: 64, StreamKeys: 20}}
	md := rep.Markdown("")
	if strings.Contains(md, "replayed through a fresh cache of capacity") {
		t.Errorf("the document describes a replay that no cache ran:\n%s", md[strings.Index(md, "## Hit ratio"):])
	}
	if !strings.Contains(md, "No cache was replayed") || !strings.Contains(md, "| xsync | x |") {
		t.Errorf("the document does not say that no cache was replayed, or lost its caches' section:\n%s", md)
	}
}
