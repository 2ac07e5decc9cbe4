package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimPolicyDefault checks -policy default end to end: the row is
// named "default" and is the default policy's (tinylfu's) replay, hit for
// hit; "cache" replays through the real cache; and every JSON object has
// hit_ratio = hits/requests within 0..1.
func TestSimPolicyDefault(t *testing.T) {
	// A skewed trace over 300 keys (key i*i mod 300 for i < 3000: a few
	// keys often, most rarely), generated, not read from ../shared.
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "%d\n", (i*i+i/7)%300)
	}
	path := filepath.Join(t.TempDir(), "skew.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSim(t, "-trace", path, "-capacity", "20,400",
		"-policy", "Default,tinylfu,cache", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6:\n%s", len(rows), out)
	}
	hits := map[string]uint64{}
	for _, r := range rows {
		if r.HitRatio == nil || *r.HitRatio < 0 || *r.HitRatio > 1 || *r.HitRatio != float64(r.Hits)/float64(r.Requests) {
			t.Errorf("row %+v: bad hit_ratio", r)
		}
		if r.Requests != 3000 || r.Trace != path {
			t.Errorf("row %+v", r)
		}
		hits[fmt.Sprint(r.Capacity, r.Policy)] = r.Hits
	}
	for _, c := range []int{20, 400} {
		d, ok := hits[fmt.Sprint(c, "default")]
		if !ok {
			t.Fatalf("no row named default at %d:\n%s", c, out)
		}
		if tl := hits[fmt.Sprint(c, "tinylfu")]; d != tl {
			t.Errorf("capacity %d: default %d hits, tinylfu %d", c, d, tl)
		}
	}
	// Everything fits in 400 entries: every request but the first of each
	// key hits, in the real cache too.
	distinct := map[string]bool{}
	for _, l := range strings.Fields(b.String()) {
		distinct[l] = true
	}
	if want := uint64(3000 - len(distinct)); hits["400default"] != want || hits["400cache"] != want {
		t.Errorf("at 400: default %d, cache %d hits, want %d", hits["400default"], hits["400cache"], want)
	}
}
