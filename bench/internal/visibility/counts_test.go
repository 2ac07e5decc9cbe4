package visibility

import (
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
)

// TestProbesAreAllRun: the document says -probes inserts, and
// updates, per run, shared by the goroutines; 10 probes on 3 goroutines
// ran 9 of each (10/3 per goroutine).
func TestProbesAreAllRun(t *testing.T) {
	p := RunProbe(lookup(t, "xsync"), 3, 10)
	if p.Inserts != 10 || p.Updates != 10 || p.InsertMissed != 0 || p.InsertLost != 0 || p.UpdateLost != 0 {
		t.Errorf("10 probes on 3 goroutines: %d inserts, %d updates (missed %d, lost %d, updates lost %d); want 10 each, none missed or lost",
			p.Inserts, p.Updates, p.InsertMissed, p.InsertLost, p.UpdateLost)
	}
}

// TestOneReplayGoroutine: with -replay-goroutines 1 the
// single-threaded replay is the only one: the table has one column and
// the chart one series. They had a "1 goroutines" column and series, the
// same figures twice, and a difference of +0.00.
func TestOneReplayGoroutine(t *testing.T) {
	rs, err := Measure(Config{ReplayCaches: []adapter.Info{lookup(t, "xsync")}, Probes: 1, ReplayCapacity: 16, ReplayGoroutines: 1, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	rep := Report{Rounds: 1, ReplayCapacity: 16, ReplayGoroutines: 1, ReplayCaches: []string{"xsync"}, Results: rs}
	if tab := rep.ReplayTable(); strings.Contains(tab, "goroutines") || strings.Contains(tab, "difference") {
		t.Errorf("the replay table with 1 goroutine repeats it:\n%s", tab)
	}
	if md := rep.Markdown("c.png"); !strings.Contains(md, "![hit ratio with 1 goroutine](c.png)") {
		t.Errorf("the document says the chart has 1 and 1 goroutines:\n%s", md)
	}
	if md := rep.Markdown(""); strings.Contains(md, "with 1, goroutine i") {
		t.Errorf("the document describes a replay with 1 goroutine as a concurrent one:\n%s", md)
	}
	if n := len(rep.bars().Series); n != 1 {
		t.Errorf("the chart with 1 goroutine has %d series, want 1", n)
	}
}

// TestMarkdownWithoutConfigs: a JSON file with fewer configurations
// than caches renders, with a dash for the missing ones; Markdown
// panicked (index out of range).
func TestMarkdownWithoutConfigs(t *testing.T) {
	rep := Report{Rounds: 1, ReplayCapacity: 16, ReplayGoroutines: 2, Caches: []string{"xsync", "lru"}, Configs: []string{"m"}, Results: &Results{}}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Markdown with fewer configs than caches panicked: %v", p)
		}
	}()
	if md := rep.Markdown(""); !strings.Contains(md, "| lru | – |") {
		t.Errorf("the caches' table lacks lru without a configuration:\n%s", md)
	}
}
