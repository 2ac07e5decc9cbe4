package main

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cachekit/cachekit/sim"
)

// loop3 is a loop over 3 keys, 3 times: with 2 entries LRU never hits, OPT
// hits 3 times and OPT with bypass 4 times; with 4 entries every repeat
// (6 of 9) hits.
const loop3 = "1\n2\n3\n1\n2\n3\n1\n2\n3\n"

// traceDir writes the test traces: loop.txt.gz (gzipped, for bare names),
// plain.txt and corrupt.gz.
func traceDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, loop3)
	zw.Close()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("loop.txt.gz", gz.Bytes())
	write("plain.txt", []byte("a\nb\n\na\nb\n"))
	corrupt := slices.Clone(gz.Bytes())
	corrupt[len(corrupt)-6] ^= 0xff // the checksum
	write("corrupt.gz", corrupt)
	return dir
}

func runSim(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"sim"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

type row struct {
	Trace    string   `json:"trace"`
	Capacity int      `json:"capacity"`
	Policy   string   `json:"policy"`
	Requests uint64   `json:"requests"`
	Hits     uint64   `json:"hits"`
	HitRatio *float64 `json:"hit_ratio"`
}

func TestSimJSON(t *testing.T) {
	dir := traceDir(t)
	code, out, errOut := runSim(t, "-traces", dir, "-trace", "loop", "-capacity", "2,4",
		"-policy", "lru,opt,opt-bypass,cache", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []row
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	want := map[int]map[string]uint64{
		2: {"lru": 0, "opt": 3, "opt-bypass": 4, "cache": 0},
		4: {"lru": 6, "opt": 6, "opt-bypass": 6, "cache": 6},
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows, want 8: %s", len(rows), out)
	}
	for i, r := range rows {
		if r.Trace != "loop" || r.Requests != 9 || r.HitRatio == nil {
			t.Fatalf("row %d: %+v", i, r)
		}
		if *r.HitRatio != float64(r.Hits)/9 {
			t.Errorf("row %d: hit_ratio %v, hits %d of %d", i, *r.HitRatio, r.Hits, r.Requests)
		}
		if r.Policy == "cache" && r.Capacity == 2 {
			continue // the real cache's choices at 2 entries are its own
		}
		if h, ok := want[r.Capacity][r.Policy]; !ok || h != r.Hits {
			t.Errorf("row %d: %+v, want %d hits", i, r, h)
		}
	}
	// Rows come in capacity, then policy, order.
	if rows[0].Capacity != 2 || rows[0].Policy != "lru" || rows[7].Capacity != 4 || rows[7].Policy != "cache" {
		t.Errorf("rows out of order: %s", out)
	}
}

func TestSimCSV(t *testing.T) {
	dir := traceDir(t)
	plain := filepath.Join(dir, "plain.txt")
	loop := filepath.Join(dir, "loop.txt.gz")
	// Two traces: the plain file, and two files joined into one trace.
	code, out, errOut := runSim(t, "-trace", plain+","+plain+"+"+loop, "-capacity", "10",
		"-policy", "OPT, lru", "-format", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"trace", "capacity", "policy", "requests", "hits", "hit_ratio"},
		{plain, "10", "opt", "4", "2", "0.500000"},
		{plain, "10", "lru", "4", "2", "0.500000"},
		{plain + "+" + loop, "10", "opt", "13", "8", "0.615385"},
		{plain + "+" + loop, "10", "lru", "13", "8", "0.615385"},
	}
	if !slices.EqualFunc(recs, want, slices.Equal) {
		t.Fatalf("csv\n%s\nwant %q", out, want)
	}
}

func TestSimTable(t *testing.T) {
	dir := traceDir(t)
	code, out, errOut := runSim(t, "-traces", dir, "-trace", "loop", "-capacity", "2", "-policy", "lru,opt,opt-bypass")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Logf("\n%s%s", out, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], "hit ratio") || !strings.Contains(lines[0], "vs opt") {
		t.Fatalf("table:\n%s", out)
	}
	for i, want := range [][]string{
		{"loop", "2", "lru", "9", "0", "0.00%", "-33.33"},
		{"loop", "2", "opt", "9", "3", "33.33%"},
		{"loop", "2", "opt-bypass", "9", "4", "44.44%", "+11.11"},
	} {
		if f := strings.Fields(lines[i+1]); len(f) != len(want)+1 || !slices.Equal(f[:len(want)], want) {
			t.Errorf("line %q, want %q and a time", lines[i+1], want)
		}
	}
	// Without opt, no gap column.
	_, out, _ = runSim(t, "-traces", dir, "-trace", "loop", "-capacity", "2", "-policy", "lru")
	if strings.Contains(out, "vs opt") {
		t.Errorf("gap to opt shown without opt:\n%s", out)
	}
}

func TestSimDefaultPolicies(t *testing.T) {
	dir := traceDir(t)
	code, out, errOut := runSim(t, "-traces", dir, "-trace", "loop", "-capacity", "4", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Policy)
		if r.Hits != 6 {
			t.Errorf("%s: %d hits, want 6 (everything fits)", r.Policy, r.Hits)
		}
	}
	if want := sim.DefaultNames(); !slices.Equal(got, want) {
		t.Fatalf("policies %v, want %v", got, want)
	}
}

func TestSimChart(t *testing.T) {
	dir := traceDir(t)
	out := t.TempDir()
	policies := []string{"lru", "fifo", "cache", "opt", "opt-bypass"}
	chart := func(file string, args ...string) []byte {
		t.Helper()
		path := filepath.Join(out, file)
		args = append([]string{"-traces", dir, "-policy", strings.Join(policies, ","), "-format", "csv", "-chart", path}, args...)
		code, _, errOut := runSim(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}

	// SVG: valid XML, an svg root, and the texts: each trace's name (a
	// panel's title) and each policy's name in each panel's legend.
	data := chart("out.svg", "-trace", "loop,plain.txt", "-capacity", "1,2,3,100")
	root, texts := svgTexts(t, data)
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	for _, s := range []string{"loop", "plain.txt", "capacity (entries, log scale)", "hit ratio (%)"} {
		if texts[s] != 1 && texts[s] != 2 || s == "loop" && texts[s] != 1 {
			t.Errorf("text %q %d times", s, texts[s])
		}
	}
	for _, p := range policies {
		if texts[p] != 2 {
			t.Errorf("policy %s in %d legends, want 2", p, texts[p])
		}
	}
	if bytes.Contains(data, []byte("font-family:Liberation Sans;")) {
		t.Errorf("no fallback for the font:\n%.2000s", data)
	}

	// PNG: an image 9 inches wide at 144 dpi, with its two panels taller
	// than wide.
	data = chart("out.PNG", "-trace", "loop,plain.txt", "-capacity", "2,4")
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("invalid PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 9*144 || b.Dy() <= b.Dx() {
		t.Errorf("PNG of %v", b)
	}
	// One capacity, hit ratios all 0 (every key is new): still a chart.
	data = chart("one.png", "-trace", "plain.txt", "-capacity", "1")
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("invalid PNG: %v", err)
	}

	// PDF.
	data = chart("out.pdf", "-trace", "loop", "-capacity", "2,4")
	if !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data[len(data)-32:], []byte("%%EOF")) {
		t.Errorf("not a PDF: %.100q...%q", data, data[len(data)-32:])
	}
}

func TestCapacityTicks(t *testing.T) {
	labels := func(tk capacityTicks, lo, hi float64) (ls []string) {
		for _, x := range tk.Ticks(lo, hi) {
			ls = append(ls, x.Label)
		}
		return ls
	}
	// Linear, 400 points: 110 is too close to 100 for a label of its own.
	lin := capacityTicks{caps: []int{100, 110, 500, 1000}, width: 400}
	if got, want := labels(lin, 100, 1000), []string{"100", "", "500", "1000"}; !slices.Equal(got, want) {
		t.Errorf("linear: labels %q, want %q", got, want)
	}
	// Log: 1, 2, 5, ... 10⁶ over 500 points, a tick each, and labels that
	// keep apart.
	var caps []int
	for c := 1; c <= 1e6; c *= 10 {
		caps = append(caps, c, 2*c, 5*c)
	}
	lg := capacityTicks{caps: caps, log: true, width: 500}
	got := labels(lg, 1, 5e6)
	if len(got) != len(caps) || !slices.Equal(got[:3], []string{"1", "2", "5"}) || !slices.Contains(got, "") {
		t.Errorf("log: labels %q", got)
	}
	// No two labels overlap (a digit being about 5.6 points wide).
	end := math.Inf(-1)
	for i, l := range got {
		if l == "" {
			continue
		}
		x, half := 500*math.Log(float64(caps[i]))/math.Log(5e6), 5.6*float64(len(l))/2
		if x-half < end {
			t.Errorf("log: labels %q: %s overlaps the label before", got, l)
		}
		end = x + half
	}
}

func TestStepTicks(t *testing.T) {
	var got []string
	for _, tk := range stepTicks(10).Ticks(0, 30) {
		got = append(got, tk.Label)
	}
	if want := []string{"0", "", "10", "", "20", "", "30"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
	got = nil
	for _, tk := range stepTicks(0.5).Ticks(97.5, 99) {
		got = append(got, tk.Label)
	}
	if want := []string{"97.5", "", "98.0", "", "98.5", "", "99.0"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestSimErrors(t *testing.T) {
	dir := traceDir(t)
	missing := filepath.Join(dir, "missing.txt")
	for _, c := range []struct {
		args []string
		want string // in the error message
	}{
		{[]string{"-capacity", "10"}, "-trace is required"},
		{[]string{"-trace", missing, "-capacity", "10"}, "missing.txt"},
		{[]string{"-traces", dir, "-trace", "nosuch", "-capacity", "10"}, "nosuch.txt.gz"},
		{[]string{"-traces", dir, "-trace", "loop+", "-capacity", "10"}, "empty file name"},
		{[]string{"-traces", dir, "-trace", "loop,", "-capacity", "10"}, "empty trace name"},
		{[]string{"-trace", dir, "-capacity", "10"}, "directory"},
		{[]string{"-traces", dir, "-trace", "loop"}, "-capacity is required"},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "ten"}, `bad -capacity "ten"`},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10,0"}, `bad -capacity "0"`},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "-5"}, `bad -capacity "-5"`},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10", "-policy", "lru,nope"}, `"nope"`},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10", "-policy", "lru,,opt"}, "empty policy"},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10", "-format", "xml"}, `unknown -format "xml"`},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10", "-chart", "out.jpg"}, `unknown format ".jpg"`},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10", "-chart", "out"}, `want a file name ending in .svg, .png, .pdf`},
		{[]string{"-traces", dir, "-trace", "corrupt.gz", "-capacity", "10"}, "corrupt.gz"},
		{[]string{"-traces", dir, "-trace", "loop", "-capacity", "10", "extra"}, `unexpected argument "extra"`},
		{[]string{"-no-such-flag"}, "no-such-flag"},
	} {
		code, out, errOut := runSim(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and an error with %q", c.args, code, out, errOut, c.want)
		}
	}
	// A chart's file that cannot be written: TestSimChartPathCheckedFirst.
}

func TestSimHelp(t *testing.T) {
	code, _, errOut := runSim(t, "-h")
	if code != 0 || !strings.Contains(errOut, "FILE+FILE") || !strings.Contains(errOut, "opt-bypass") {
		t.Errorf("-h: exit %d, %s", code, errOut)
	}
	var out bytes.Buffer
	if run([]string{"help"}, &out, io.Discard); !strings.Contains(out.String(), "sim") {
		t.Errorf("the command's help does not list sim:\n%s", out.String())
	}
}
