package replay

import (
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// writeTrace writes a gzipped trace of keys i*i mod 997 for i < n.
func writeTrace(t *testing.T, dir, name string, n int) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name+".txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	for i := range n {
		fmt.Fprintf(zw, "%d\n", (i*i)%997)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestParseTraces(t *testing.T) {
	ts, err := ParseTraces("a@10, b@20")
	if err != nil || len(ts) != 2 || ts[1] != (Trace{"b", 20}) {
		t.Errorf("ParseTraces = %v, %v", ts, err)
	}
	for _, bad := range []string{"a", "a@", "a@0", "@5", "a@x"} {
		if _, err := ParseTraces(bad); err == nil {
			t.Errorf("ParseTraces(%q) succeeded", bad)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "t", 5000)
	keys, err := Load(dir, "t")
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[uint64]bool{}
	for _, k := range keys {
		distinct[k] = true
	}
	xsync, _ := adapter.Lookup("xsync")
	one, wall := Run(xsync, keys, 100, 1)
	// A key repeated within one batch misses each time while it is
	// absent: the batch's Gets come before its Sets.
	most := uint64(5000 - len(distinct))
	if one.Gets != 5000 || one.Hits > most || one.Hits < most*9/10 || one.Hits+one.Sets != 5000 || wall <= 0 {
		t.Errorf("one goroutine through a map: %+v (%d distinct keys)", one, len(distinct))
	}
	if one.GetTime <= 0 || one.SetTime <= 0 {
		t.Errorf("no time measured: %+v", one)
	}
	many, _ := Run(xsync, keys, 100, 4)
	if many.Gets != 5000 || many.Hits > most || many.Hits+many.Sets != 5000 {
		t.Errorf("4 goroutines through a map: %+v", many)
	}
	if _, err := Load(dir, "missing"); err == nil {
		t.Error("a missing trace loaded")
	}
}

func TestMeasureAndReport(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, "t", 3000)
	var caches []adapter.Info
	for _, n := range []string{"cachekit", "xsync"} {
		i, _ := adapter.Lookup(n)
		caches = append(caches, i)
	}
	infos, res, err := Measure(Config{Dir: dir, Traces: []Trace{{"t", 100}}, Caches: caches, Goroutines: []int{1, 2}, Rounds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Requests != 3000 || infos[0].Unique == 0 || len(res) != 8 {
		t.Fatalf("infos %+v, %d results", infos, len(res))
	}
	rep := Report{Header: report.Header{Command: "go run ./bench/cmd/replay"}, Rounds: 2, Goroutines: []int{1, 2}, Traces: infos,
		Caches: []string{"cachekit", "xsync"}, Configs: []string{"c", "x"}, Results: res}
	c, ok := rep.Cell(Trace{"t", 100}, "cachekit", 1)
	x, _ := rep.Cell(Trace{"t", 100}, "xsync", 1)
	if !ok || c.HitRatio <= 0 || c.HitRatio > x.HitRatio || c.ReadNs <= 0 || c.PerSec <= 0 {
		t.Errorf("cachekit %+v, xsync %+v", c, x)
	}
	name, err := rep.Chart(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	md := rep.Markdown(name)
	for _, want := range []string{"## t @100", "### 2 goroutines", "| xsync |", "×)"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if _, _, err := Measure(Config{Dir: dir, Traces: []Trace{{"nope", 1}}, Caches: caches, Goroutines: []int{1}, Rounds: 1}); err == nil {
		t.Error("a missing trace was measured")
	}
}
