package hitratio

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/sim"
)

// writeTraceFile writes keys as a gzipped trace file.
func writeTraceFile(t *testing.T, path string, keys []uint64) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, k := range keys {
		fmt.Fprintln(zw, k)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tinyKeys returns a small trace mixing a loop and skewed random keys.
func tinyKeys(seed uint64, n int) []uint64 {
	r := rand.New(rand.NewPCG(seed, 1))
	z := rand.NewZipf(r, 1.2, 1, 500)
	keys := make([]uint64, 0, n)
	for i := 0; len(keys) < n; i++ {
		if i%3 == 0 {
			keys = append(keys, 1000+uint64(i%60)) // a loop over 60 keys
		} else {
			keys = append(keys, z.Uint64())
		}
	}
	return keys
}

// tinySuite writes two tiny traces into a temporary directory and returns
// it with their specs.
func tinySuite(t *testing.T) (string, []TraceSpec) {
	dir := t.TempDir()
	specs := []TraceSpec{
		{Name: "tiny-a", Family: FamilyLoop, About: "a loop and Zipf keys", Capacities: []int{5, 20, 80}},
		{Name: "tiny-b", Family: FamilySkew, About: "more of the same", Capacities: []int{10, 40}},
	}
	for i, s := range specs {
		writeTraceFile(t, filepath.Join(dir, s.File()), tinyKeys(uint64(i+1), 3000))
	}
	return dir, specs
}

func TestEveryCacheFindsWhatItJustSet(t *testing.T) {
	keys := []uint64{1, 2, 3, 1 << 40, 1, 2, 3, 1 << 40}
	tr := sim.NewTrace(keys)
	for _, c := range Contenders() {
		t.Run(c.Name, func(t *testing.T) {
			cache, err := c.New(tr, 100)
			if err != nil {
				t.Fatal(err)
			}
			if cl, ok := cache.(interface{ Close() error }); ok {
				defer cl.Close()
			}
			for i, k := range keys {
				hit := cache.Access(k)
				if want := i >= 4; hit != want {
					t.Errorf("request %d (key %d): hit = %v, want %v", i, k, hit, want)
				}
			}
		})
	}
}

// Only ristretto reports dropped Get records. (How many it records is not
// checked: under the race detector, sync.Pool drops items at random, and
// ristretto's read buffers live in one, so it records none.)
func TestReadRecorders(t *testing.T) {
	for _, c := range Peers() {
		cache, err := c.New(nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		rr, ok := cache.(ReadRecorder)
		if !ok {
			t.Fatalf("%s: no ReadRecords", c.Name)
		}
		if _, _, ok := rr.ReadRecords(); ok != (c.Name == "ristretto") {
			t.Errorf("%s: ReadRecords reports %v", c.Name, ok)
		}
		cache.(interface{ Close() error }).Close()
	}
}

func TestPeersRejectBadCapacity(t *testing.T) {
	for _, c := range Peers() {
		if _, err := c.New(nil, 0); err == nil {
			t.Errorf("%s: capacity 0 accepted", c.Name)
		}
	}
}

func TestContenders(t *testing.T) {
	cs := Contenders()
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Name] {
			t.Errorf("%s listed twice", c.Name)
		}
		seen[c.Name] = true
		if c.Config == "" {
			t.Errorf("%s has no description", c.Name)
		}
	}
	for _, want := range []string{NameDefault, NameCache, "lru", "s3fifo", "otter", "theine", "ristretto", "golang-lru", "2q", "arc", NameOPT, NameOPTBypass} {
		if !seen[want] {
			t.Errorf("%s missing from the contenders", want)
		}
	}
	// Every registered policy is there, the default under "default" only.
	for _, name := range OurPolicies() {
		if !seen[name] {
			t.Errorf("registered policy %s missing", name)
		}
	}
	if got := len(OurPolicies()) + 2 + len(Peers()) + 2; got != len(cs) {
		t.Errorf("%d contenders, want %d", len(cs), got)
	}
	sel, err := SelectContenders("arc, default")
	if err != nil || len(sel) != 2 || sel[0].Name != NameDefault || sel[1].Name != "arc" {
		t.Errorf("SelectContenders(arc, default) = %v, %v", sel, err)
	}
	if _, err := SelectContenders("default,nope"); err == nil {
		t.Error("SelectContenders accepted an unknown cache")
	}
}

func TestRunTinySuite(t *testing.T) {
	dir, specs := tinySuite(t)
	var progress bytes.Buffer
	rs, err := Run(Config{TracesDir: dir, Traces: specs, Caches: Contenders(), Runs: 2, Parallel: 2, Isolate: true, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	nPoints := 5
	if got, want := len(rs.Results), nPoints*len(Contenders()); got != want {
		t.Fatalf("%d results, want %d", got, want)
	}
	if got := len(rs.Points()); got != nPoints {
		t.Errorf("%d points, want %d", got, nPoints)
	}
	for _, ti := range rs.Traces {
		if ti.Requests != 3000 || ti.Unique == 0 || ti.Unique > ti.Requests {
			t.Errorf("%s: %d requests, %d unique", ti.Name, ti.Requests, ti.Unique)
		}
	}
	for _, r := range rs.Results {
		c, _ := SelectContenders(r.Cache)
		wantRuns := 1
		if c[0].Random {
			wantRuns = 2
		}
		if len(r.Hits) != wantRuns {
			t.Errorf("%s @%d %s: %d runs, want %d", r.Trace, r.Capacity, r.Cache, len(r.Hits), wantRuns)
		}
		if h := r.HitRatio(); h < 0 || h > 1 {
			t.Errorf("%s @%d %s: hit ratio %v", r.Trace, r.Capacity, r.Cache, h)
		}
	}
	for _, p := range rs.Points() {
		opt, _ := rs.Ratio(p.Trace, p.Capacity, NameOPT)
		bypass, _ := rs.Ratio(p.Trace, p.Capacity, NameOPTBypass)
		if bypass < opt-1e-9 {
			t.Errorf("%v: OPT-bypass %.2f below OPT %.2f", p, bypass, opt)
		}
		// The deterministic single-threaded caches cannot beat the optimum.
		for _, c := range append(OurPolicies(), NameDefault, "golang-lru", "2q", "arc") {
			if h, _ := rs.Ratio(p.Trace, p.Capacity, c); h > bypass+1e-9 {
				t.Errorf("%v: %s %.2f above OPT-bypass %.2f", p, c, h, bypass)
			}
		}
		// Two implementations of LRU agree exactly.
		a, b := rs.Get(p.Trace, p.Capacity, "lru"), rs.Get(p.Trace, p.Capacity, "golang-lru")
		if a.Hits[0] != b.Hits[0] {
			t.Errorf("%v: our lru has %d hits, golang-lru %d", p, a.Hits[0], b.Hits[0])
		}
	}
	if n := strings.Count(progress.String(), "\n"); n == 0 {
		t.Error("no progress reported")
	}
}

func TestRunErrors(t *testing.T) {
	dir, specs := tinySuite(t)
	caches, _ := SelectContenders("lru")
	missing := []TraceSpec{{Name: "absent", Capacities: []int{1}}}
	if _, err := Run(Config{TracesDir: dir, Traces: missing, Caches: caches}); err == nil {
		t.Error("a missing trace file was not reported")
	}
	bad := []TraceSpec{{Name: specs[0].Name, Capacities: []int{0}}}
	if _, err := Run(Config{TracesDir: dir, Traces: bad, Caches: caches}); err == nil {
		t.Error("capacity 0 was not reported")
	}
}

// fakeResults builds Results by hand: two points, hit ratios in %.
func fakeResults(ratios map[string][2]float64) *Results {
	rs := &Results{Runs: 1, Traces: []TraceInfo{{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, About: "fake", Capacities: []int{10, 20}}, Requests: 10000, Unique: 100}}}
	for _, c := range Contenders() {
		v, ok := ratios[c.Name]
		if !ok {
			continue
		}
		rs.Caches = append(rs.Caches, c)
		for i, capacity := range []int{10, 20} {
			rs.Results = append(rs.Results, &Result{Trace: "t", Capacity: capacity, Cache: c.Name, Kind: c.Kind,
				Requests: 10000, Hits: []uint64{uint64(math.Round(v[i] * 100))}})
		}
	}
	return rs
}

func TestSummaries(t *testing.T) {
	rs := fakeResults(map[string][2]float64{
		NameDefault:   {50, 60},
		NameCache:     {49.95, 61},
		"lru":         {40, 60},
		"otter":       {50, 59},
		"arc":         {45, 60.5},
		NameOPTBypass: {70, 80},
		NameOPT:       {68, 79},
	})
	sums := map[string]Summary{}
	for _, s := range rs.Summaries() {
		sums[s.Cache] = s
	}
	check := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("default mean", sums[NameDefault].Mean, 55)
	check("default gap to OPT-bypass", sums[NameDefault].GapOPTBypass, 20)
	check("default gap to OPT", sums[NameDefault].GapOPT, 18.5)
	// Point 1: default and otter tie at 50 (cache 49.95 is 0.05 below);
	// point 2: cache 61 is best.
	if s := sums[NameDefault]; s.Best != 1 || s.BelowPeer != 1 || s.WorstAt != (Point{"t", 20}) {
		t.Errorf("default: %+v", s)
	}
	check("default worst gap", sums[NameDefault].WorstGap, -0.5)
	if s := sums[NameCache]; s.Best != 1 || s.BelowPeer != 0 {
		t.Errorf("cache: %+v", s)
	}
	check("cache worst gap", sums[NameCache].WorstGap, -0.05)
	if s := sums["otter"]; s.Best != 1 || !math.IsNaN(s.WorstGap) {
		t.Errorf("otter: %+v", s)
	}
	check("best peer mean", rs.BestPeerMean(), (50+60.5)/2)
	best, who, ok := rs.Best(Point{"t", 10}, rs.Contenders())
	if !ok || best != 50 || !slices.Equal(who, []string{NameDefault, "otter"}) {
		t.Errorf("Best = %v, %v, %v", best, who, ok)
	}
}

// checkTables checks that every Markdown table has as many cells in each
// row as in its header, and a separator row.
func checkTables(t *testing.T, md string) int {
	t.Helper()
	tables := 0
	cols := -1
	lines := strings.Split(md, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			cols = -1
			continue
		}
		if !strings.HasSuffix(line, "|") {
			t.Errorf("line %d: table row does not end with |: %q", i+1, line)
		}
		n := strings.Count(strings.ReplaceAll(line, "\\|", ""), "|") - 1
		if cols < 0 {
			cols = n
			tables++
			if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|-") && !strings.HasPrefix(lines[i+1], "|:") && !strings.HasPrefix(lines[i+1], "|--") {
				t.Errorf("line %d: table header without a separator row", i+1)
			}
			continue
		}
		if n != cols {
			t.Errorf("line %d: %d cells, the header has %d: %q", i+1, n, cols, line)
		}
	}
	return tables
}

func TestReports(t *testing.T) {
	dir, specs := tinySuite(t)
	rs, err := Run(Config{TracesDir: dir, Traces: specs, Caches: Contenders(), Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	charts, err := WriteCharts(rs, out, "hit-ratio-", ".png")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{}
	for trace, path := range charts {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
			t.Errorf("%s: %v, too small", path, b)
		}
		links[trace] = filepath.Base(path)
	}
	if len(charts) != len(specs) {
		t.Errorf("%d charts for %d traces", len(charts), len(specs))
	}
	report := Report{Meta: NewMeta("go run ./bench/cmd/hitratio -x", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), 2, true), Results: rs, Charts: links}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, report); err != nil {
		t.Fatal(err)
	}
	text := md.String()
	if n := checkTables(t, text); n < 1+2*len(specs)+1 {
		t.Errorf("%d tables, want at least %d", n, 2+2*len(specs))
	}
	for _, want := range []string{"`go run ./bench/cmd/hitratio -x`", "2026-01-02 03:04 UTC", "## Summary", "#### tiny-a", "#### tiny-b",
		"(hit-ratio-tiny-a.png)", "(hit-ratio-tiny-b.png)", "OPT-bypass", "best other of ours", "Wait()"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	if strings.Count(text, "<details>") != strings.Count(text, "</details>") {
		t.Error("unbalanced <details>")
	}
	if strings.Contains(text, "NaN") || strings.Contains(text, "%!") {
		t.Errorf("the Markdown has a formatting error:\n%s", text)
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, report); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Command string `json:"command"`
		Results []struct {
			Trace    string  `json:"trace"`
			Capacity int     `json:"capacity"`
			Cache    string  `json:"cache"`
			Requests uint64  `json:"requests"`
			Hits     float64 `json:"hits"`
			HitRatio float64 `json:"hit_ratio"`
		} `json:"results"`
		Summary []map[string]any `json:"summary"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, js.String())
	}
	if got.Command != report.Meta.Command || len(got.Results) != len(rs.Results) || len(got.Summary) != len(rs.Caches) {
		t.Errorf("JSON: command %q, %d results, %d summaries", got.Command, len(got.Results), len(got.Summary))
	}
	for _, r := range got.Results {
		if r.HitRatio < 0 || r.HitRatio > 1 || math.Abs(r.Hits/float64(r.Requests)-r.HitRatio) > 1e-9 {
			t.Errorf("JSON result %+v", r)
		}
	}
}

func TestChartFormats(t *testing.T) {
	rs := fakeResults(map[string][2]float64{NameDefault: {10, 20}, "otter": {11, 19}, "lru": {5, 15}, NameOPTBypass: {30, 40}})
	ch := TraceChart(rs, rs.Traces[0])
	names := []string{}
	for _, s := range ch.Series {
		names = append(names, s.Name)
	}
	if want := []string{NameDefault, "lru (best other of ours)", "otter", "OPT-bypass"}; !slices.Equal(names, want) {
		t.Errorf("series %v, want %v", names, want)
	}
	var svg bytes.Buffer
	if err := ch.Write(&svg, "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "<svg") {
		t.Error("not an SVG")
	}
	if err := ch.Write(&svg, "gif"); err == nil {
		t.Error("an unknown format was accepted")
	}
	if err := (Chart{Title: "empty"}).Write(&svg, "png"); err == nil {
		t.Error("an empty chart was drawn")
	}
}

func TestTicks(t *testing.T) {
	ticks := yTicks(10).Ticks(0, 40)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.Label)
	}
	if want := []string{"0", "10", "20", "30", "40"}; !slices.Equal(labels, want) {
		t.Errorf("y ticks %v, want %v", labels, want)
	}
	if got := yTicks(0.5).Ticks(1, 2); got[1].Label != "1.5" {
		t.Errorf("y ticks %v", got)
	}
	caps := capacityTicks{250, 1000, 10000}.Ticks(200, 20000)
	if len(caps) != 3 || caps[2].Label != "10,000" {
		t.Errorf("capacity ticks %v", caps)
	}
	for step, span := range map[float64]float64{0.1: 0.5, 1: 7, 5: 35, 10: 70} {
		if got := yStep(span); got != step {
			t.Errorf("yStep(%v) = %v, want %v", span, got, step)
		}
	}
}

func TestSuite(t *testing.T) {
	s := Suite()
	if len(s) != 15 {
		t.Errorf("%d traces in the suite", len(s))
	}
	seen := map[string]bool{}
	points := 0
	for _, tr := range s {
		if seen[tr.Name] {
			t.Errorf("%s twice", tr.Name)
		}
		seen[tr.Name] = true
		if !slices.IsSorted(tr.Capacities) || len(tr.Capacities) == 0 || tr.Capacities[0] <= 0 {
			t.Errorf("%s: capacities %v", tr.Name, tr.Capacities)
		}
		if tr.About == "" || !slices.Contains(Families(), tr.Family) {
			t.Errorf("%s: no description or family", tr.Name)
		}
		points += len(tr.Capacities)
	}
	if points != 51 {
		t.Errorf("%d points, want 51", points)
	}
	s[0].Capacities[0] = -1
	if Suite()[0].Capacities[0] == -1 {
		t.Error("Suite returned its own table")
	}
	sel, err := SelectTraces(Suite(), "lirs-cs, arc-oltp")
	if err != nil || len(sel) != 2 || sel[0].Name != "arc-oltp" {
		t.Errorf("SelectTraces = %v, %v", sel, err)
	}
	if _, err := SelectTraces(Suite(), "arc-oltp,nope"); err == nil {
		t.Error("an unknown trace was accepted")
	}
}

const sampleReadme = `# Traces

Some text.

| trace | what it is | requests | unique | capacities | LRU | OPT-bypass |
|---|---|---:|---:|---|---|---|
| arc-oltp | CODASYL | 914,145 | 186,880 | 250 / 500 / 1000 | 16.47 / 23.45 / 32.83 | 38.47 / 46.43 / 53.62 |
| lirs-cs | cscope, loop | 6,781 | 1,409 | 100 / 500 | 1.83 / 1.83 | 7.73 / 31.32 |
| extra | not in ours | 1 | 1 | 7 | 0 | 0 |

| trace @ capacity | otter |
|---|---|
| arc-oltp @250 | 24.35 |
`

func TestReadme(t *testing.T) {
	table, err := ReadmeSuite(strings.NewReader(sampleReadme))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(table["arc-oltp"], []int{250, 500, 1000}) || len(table) != 3 {
		t.Errorf("parsed %v", table)
	}
	ours := []TraceSpec{
		{Name: "arc-oltp", Capacities: []int{250, 500, 1000}},
		{Name: "lirs-cs", Capacities: []int{100, 500, 1000}},
		{Name: "missing", Capacities: []int{1}},
	}
	diffs, err := CheckReadme(ours, strings.NewReader(sampleReadme))
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 3 || !strings.Contains(diffs[0], "lirs-cs") || !strings.Contains(diffs[1], "missing") || !strings.Contains(diffs[2], "extra") {
		t.Errorf("diffs %q", diffs)
	}
	if _, err := ReadmeSuite(strings.NewReader("no table here\n")); err == nil {
		t.Error("a README without a table was accepted")
	}
	if diffs, err := CheckReadme(Suite()[:1], strings.NewReader(strings.Replace(sampleReadme, "| extra | not in ours | 1 | 1 | 7 | 0 | 0 |\n", "", 1))); err != nil || len(diffs) != 2 {
		t.Errorf("CheckReadme(arc-oltp) = %q, %v", diffs, err)
	}
}

// TestSyntheticTraces checks the synthetic generators: the same name gives
// the same keys, every trace of the suite can be generated, and each has
// the shape its description gives.
func TestSyntheticTraces(t *testing.T) {
	if _, err := SyntheticKeys("nope"); err == nil {
		t.Error("an unknown synthetic trace was generated")
	}
	traces := map[string][]uint64{}
	for _, spec := range SyntheticSuite() {
		keys, err := SyntheticLoad("/any/dir/" + spec.File())
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		traces[spec.Name] = keys
	}
	again, _ := SyntheticKeys("synthetic-shift")
	if !slices.Equal(again, traces["synthetic-shift"]) {
		t.Error("synthetic-shift differs between two generations")
	}
	count := func(keys []uint64) map[uint64]int {
		m := map[uint64]int{}
		for _, k := range keys {
			m[k]++
		}
		return m
	}
	// Skew: rank 0 is the most requested key.
	for _, name := range []string{"synthetic-zipf-0.7", "synthetic-zipf-1.2"} {
		c := count(traces[name])
		for k, n := range c {
			if n > c[0] {
				t.Errorf("%s: key %d requested %d times, more than key 0 (%d)", name, k, n, c[0])
				break
			}
		}
	}
	// Shift: no key is requested in two phases.
	shift := traces["synthetic-shift"]
	phase := map[uint64]int{}
	for i, k := range shift {
		if p, ok := phase[k]; ok && p != i/200_000 {
			t.Fatalf("synthetic-shift: key %d in phases %d and %d", k, p, i/200_000)
		}
		phase[k] = i / 200_000
	}
	// Scan: six scans of 50,000 keys requested once each.
	once := 0
	for k, n := range count(traces["synthetic-scan"]) {
		if k >= 1<<40 {
			if n != 1 {
				t.Fatalf("synthetic-scan: scanned key %d requested %d times", k, n)
			}
			once++
		}
	}
	if once != 6*50_000 {
		t.Errorf("synthetic-scan: %d scanned keys, want %d", once, 6*50_000)
	}
	// Loop: every other request walks a loop of 12,000 keys.
	loop := traces["synthetic-loop"]
	for i := 1; i < len(loop); i += 2 {
		if want := uint64(1<<41 + (i/2)%12_000); loop[i] != want {
			t.Fatalf("synthetic-loop: request %d is %d, want %d", i, loop[i], want)
		}
	}
}
