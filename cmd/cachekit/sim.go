package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cachekit/cachekit/sim"
)

const simUsage = `usage: cachekit sim -trace TRACE[,TRACE...] -capacity N[,N...] [flags]

Replays each trace through a cache of each capacity for each policy, and
prints one row per (trace, capacity, policy) with the hit ratio.

A TRACE is FILE, or FILE+FILE+... for several files read in order as one
trace. A FILE that does not exist and has no directory part is looked up
in the -traces directory, as is and then with .txt.gz added: "-trace
arc-oltp" reads ../shared/traces/arc-oltp.txt.gz. Commas separate traces,
each replayed on its own: "-trace a.txt+b.txt.gz,c" is two traces. Trace
files hold one key per line, plain or gzipped (decimal integers are keys as
they are, other lines are hashed).

Policies:
%s
or "default" for the default policy. "cache" is the real concurrent cache
(Get, then Set on a miss), "opt" is Bélády's optimum and "opt-bypass"
Bélády's optimum allowed to refuse admission (the ceiling for caches that
filter admissions); the others are the registered eviction policies.
Policies run concurrently, each replay on one goroutine.

flags:
`

// simFlags are the parsed and checked flags of cachekit sim.
type simFlags struct {
	traces     []simTrace
	capacities []int
	policies   []string
	format     string
	chart      string
}

// simTrace is one trace to replay: its name as given and its files.
type simTrace struct {
	name  string
	files []string
}

// simRow is one line of output.
type simRow struct {
	Trace    string  `json:"trace"`
	Capacity int     `json:"capacity"`
	Policy   string  `json:"policy"`
	Requests uint64  `json:"requests"`
	Hits     uint64  `json:"hits"`
	HitRatio float64 `json:"hit_ratio"`

	elapsed time.Duration
}

func simulate(args []string, stdout, stderr io.Writer) int {
	f, err := parseSimFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		if err != errReported {
			fmt.Fprintln(stderr, "cachekit sim:", err)
		}
		return 2
	}
	var rows []simRow
	for _, tr := range f.traces {
		start := time.Now()
		keys, err := sim.Load(tr.files...)
		if err != nil {
			fmt.Fprintf(stderr, "cachekit sim: trace %s: %v\n", tr.name, err)
			return 2
		}
		loaded := time.Since(start)
		r, err := replayAll(tr.name, sim.NewTrace(keys), f.capacities, f.policies)
		if err != nil {
			fmt.Fprintf(stderr, "cachekit sim: trace %s: %v\n", tr.name, err)
			return 1
		}
		if f.format == "table" {
			fmt.Fprintf(stderr, "trace %s: %d requests, loaded in %v, replayed in %v\n",
				tr.name, len(keys), loaded.Round(time.Millisecond), time.Since(start.Add(loaded)).Round(time.Millisecond))
		}
		rows = append(rows, r...)
	}
	if err := writeRows(stdout, f.format, rows); err != nil {
		fmt.Fprintln(stderr, "cachekit sim:", err)
		return 1
	}
	if f.chart != "" {
		var buf bytes.Buffer
		writeChart(&buf, rows)
		if err := os.WriteFile(f.chart, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(stderr, "cachekit sim:", err)
			return 1
		}
	}
	return 0
}

// errReported is a parse error that the flag package already printed.
var errReported = errors.New("reported")

func parseSimFlags(args []string, stderr io.Writer) (*simFlags, error) {
	fs := newFlagSet("sim", stderr)
	traceList := fs.String("trace", "", "the traces `TRACE[,TRACE...]`, each FILE or FILE+FILE+... (required)")
	dir := fs.String("traces", "../shared/traces", "the `directory` of bare trace names")
	capList := fs.String("capacity", "", "the cache capacities in entries, `N[,N...]` (required)")
	polList := fs.String("policy", strings.Join(sim.DefaultNames(), ","), "the policies to compare, `P[,P...]`")
	format := fs.String("format", "table", "the output format: table, csv or json")
	chart := fs.String("chart", "", "also write an SVG chart of hit ratio against capacity to `file`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), simUsage, wrap("  ", strings.Join(sim.Names(), ", ")+",", 74))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, errReported
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags come before arguments; lists are comma-separated)", fs.Arg(0))
	}
	f := &simFlags{format: *format, chart: *chart}
	switch f.format {
	case "table", "csv", "json":
	default:
		return nil, fmt.Errorf("unknown -format %q (want table, csv or json)", f.format)
	}
	if *capList == "" {
		return nil, errors.New("-capacity is required")
	}
	for _, s := range strings.Split(*capList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad -capacity %q: want a positive number of entries", s)
		}
		if !slices.Contains(f.capacities, n) {
			f.capacities = append(f.capacities, n)
		}
	}
	for _, p := range strings.Split(*polList, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			return nil, errors.New("empty policy name in -policy")
		}
		if err := sim.Check(p); err != nil {
			return nil, fmt.Errorf("-policy: %v", err)
		}
		if !slices.Contains(f.policies, p) {
			f.policies = append(f.policies, p)
		}
	}
	if *traceList == "" {
		return nil, errors.New("-trace is required")
	}
	for _, spec := range strings.Split(*traceList, ",") {
		tr, err := resolveTrace(spec, *dir)
		if err != nil {
			return nil, err
		}
		f.traces = append(f.traces, tr)
	}
	return f, nil
}

// wrap breaks text into lines of at most width bytes (longer words stay
// whole), each starting with indent.
func wrap(indent, text string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

// resolveTrace finds the files of a trace spec: FILE[+FILE...], where a
// FILE that does not exist but has no directory part may be a bare name
// in dir.
func resolveTrace(spec, dir string) (simTrace, error) {
	spec = strings.TrimSpace(spec)
	tr := simTrace{name: spec}
	if spec == "" {
		return tr, errors.New("empty trace name in -trace")
	}
	for _, name := range strings.Split(spec, "+") {
		path, err := resolveFile(name, dir)
		if err != nil && name == "" {
			err = fmt.Errorf("trace %q: empty file name", spec)
		}
		if err != nil {
			return tr, err
		}
		tr.files = append(tr.files, path)
	}
	return tr, nil
}

func resolveFile(name, dir string) (string, error) {
	if name == "" {
		return "", errors.New("empty file name in -trace")
	}
	st, err := os.Stat(name)
	if err == nil {
		if st.IsDir() {
			return "", fmt.Errorf("trace %s is a directory", name)
		}
		return name, nil
	}
	if !errors.Is(err, os.ErrNotExist) || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("trace %s: %v", name, err)
	}
	tried := []string{name}
	for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, name+".txt.gz")} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("trace %s not found (tried %s)", name, strings.Join(tried, ", "))
}

// replayAll replays t for every capacity and policy, concurrently on up to
// GOMAXPROCS goroutines, and returns the rows in capacity, then policy,
// order.
func replayAll(name string, t *sim.Trace, capacities []int, policies []string) ([]simRow, error) {
	rows := make([]simRow, 0, len(capacities)*len(policies))
	for _, c := range capacities {
		for _, p := range policies {
			rows = append(rows, simRow{Trace: name, Capacity: c, Policy: p})
		}
	}
	errs := make([]error, len(rows))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(rows)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				r := &rows[i]
				start := time.Now()
				res, err := t.Run(r.Policy, r.Capacity)
				r.elapsed = time.Since(start)
				r.Requests, r.Hits, r.HitRatio, errs[i] = res.Requests, res.Hits, res.HitRatio(), err
			}
		}()
	}
	for i := range rows {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return rows, errors.Join(errs...)
}

func writeRows(w io.Writer, format string, rows []simRow) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []simRow{}
		}
		return enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"trace", "capacity", "policy", "requests", "hits", "hit_ratio"})
		for _, r := range rows {
			cw.Write([]string{r.Trace, strconv.Itoa(r.Capacity), r.Policy,
				strconv.FormatUint(r.Requests, 10), strconv.FormatUint(r.Hits, 10),
				strconv.FormatFloat(r.HitRatio, 'f', 6, 64)})
		}
		cw.Flush()
		return cw.Error()
	}
	// The table: hit ratios in %, and the gap to opt when opt ran.
	type point struct {
		trace    string
		capacity int
	}
	opt := map[point]float64{}
	for _, r := range rows {
		if r.Policy == sim.NameOPT {
			opt[point{r.Trace, r.Capacity}] = r.HitRatio
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "trace\tcapacity\tpolicy\trequests\thits\thit ratio\t"
	if len(opt) > 0 {
		header += "vs opt\t"
	}
	fmt.Fprintln(tw, header+"time\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%.2f%%\t", r.Trace, r.Capacity, r.Policy, r.Requests, r.Hits, 100*r.HitRatio)
		if len(opt) > 0 {
			if o, ok := opt[point{r.Trace, r.Capacity}]; ok && r.Policy != sim.NameOPT {
				fmt.Fprintf(tw, "%+.2f\t", 100*(r.HitRatio-o))
			} else {
				fmt.Fprint(tw, "\t")
			}
		}
		fmt.Fprintf(tw, "%v\t\n", r.elapsed.Round(time.Millisecond))
	}
	return tw.Flush()
}

// The chart: one panel per trace, hit ratio (y) against capacity (x, on a
// log scale when the capacities span a factor of 10 or more), one polyline
// with point markers per policy, and a legend on the right.
const (
	panelW, panelH = 760, 400
	plotX, plotY   = 70, 40   // the plot area's top left corner in a panel
	plotW, plotH   = 520, 300 // the plot area's size
)

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
	"#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

func writeChart(w io.Writer, rows []simRow) {
	var traces []string
	var policies []string
	for _, r := range rows {
		if !slices.Contains(traces, r.Trace) {
			traces = append(traces, r.Trace)
		}
		if !slices.Contains(policies, r.Policy) {
			policies = append(policies, r.Policy)
		}
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %[1]d %[2]d" font-family="sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="white"/>
`, panelW, panelH*max(1, len(traces)))
	for i, tr := range traces {
		var mine []simRow
		for _, r := range rows {
			if r.Trace == tr {
				mine = append(mine, r)
			}
		}
		fmt.Fprintf(w, "<g transform=\"translate(0,%d)\">\n", i*panelH)
		writePanel(w, tr, mine, policies)
		fmt.Fprintln(w, "</g>")
	}
	fmt.Fprintln(w, "</svg>")
}

func writePanel(w io.Writer, trace string, rows []simRow, policies []string) {
	var caps []int
	lo, hi := 1.0, 0.0
	for _, r := range rows {
		if !slices.Contains(caps, r.Capacity) {
			caps = append(caps, r.Capacity)
		}
		lo, hi = min(lo, r.HitRatio), max(hi, r.HitRatio)
	}
	slices.Sort(caps)
	// y: hit ratio in %, from lo to hi rounded out to a step.
	step := niceStep(100 * (hi - lo))
	ylo := math.Floor(100*lo/step) * step
	yhi := math.Ceil(100*hi/step) * step
	if yhi <= ylo {
		yhi = ylo + step
	}
	y := func(ratio float64) float64 { return plotY + plotH*(1-(100*ratio-ylo)/(yhi-ylo)) }
	// x: capacity.
	cmin, cmax := float64(caps[0]), float64(caps[len(caps)-1])
	logX := cmax >= 10*cmin
	x := func(c int) float64 {
		switch {
		case cmax == cmin:
			return plotX + plotW/2
		case logX:
			return plotX + plotW*math.Log(float64(c)/cmin)/math.Log(cmax/cmin)
		}
		return plotX + plotW*(float64(c)-cmin)/(cmax-cmin)
	}

	fmt.Fprintf(w, "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", plotX, xmlText(trace))
	// Axes, grid and tick labels.
	fmt.Fprintf(w, "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"black\"/>\n", plotX, plotY, plotY+plotH, plotX+plotW)
	for v := ylo; v <= yhi+step/2; v += step {
		py := y(v / 100)
		fmt.Fprintf(w, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", plotX, py, plotX+plotW, py)
		fmt.Fprintf(w, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s%%</text>\n", plotX-6, py+4, strconv.FormatFloat(v, 'f', -1, 64))
	}
	every := (len(caps) + 9) / 10 // at most about 10 labels
	for i, c := range caps {
		px := x(c)
		fmt.Fprintf(w, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n", px, plotY+plotH, px, plotY+plotH+5)
		if i%every == 0 {
			fmt.Fprintf(w, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", px, plotY+plotH+20, c)
		}
	}
	scale := ""
	if logX {
		scale = ", log scale"
	}
	fmt.Fprintf(w, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">capacity (entries%s)</text>\n", plotX+plotW/2, plotY+plotH+44, scale)
	fmt.Fprintf(w, "<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">hit ratio</text>\n", plotY+plotH/2)
	// One polyline and legend entry per policy.
	for i, p := range policies {
		color, dash := palette[i%len(palette)], ""
		switch p {
		case sim.NameOPT:
			color, dash = "black", ` stroke-dasharray="6 3"`
		case sim.NameOPTBypass:
			color, dash = "#777", ` stroke-dasharray="2 3"`
		}
		var pts []string
		var marks bytes.Buffer
		for _, r := range rows {
			if r.Policy == p {
				px, py := x(r.Capacity), y(r.HitRatio)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px, py))
				fmt.Fprintf(&marks, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s @%d: %.2f%%</title></circle>\n",
					px, py, color, xmlText(p), r.Capacity, 100*r.HitRatio)
			}
		}
		fmt.Fprintf(w, "<polyline data-policy=\"%s\" points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
			xmlText(p), strings.Join(pts, " "), color, dash)
		w.Write(marks.Bytes())
		ly := plotY + 10 + 20*i
		fmt.Fprintf(w, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
			plotX+plotW+20, ly, plotX+plotW+44, ly, color, dash)
		fmt.Fprintf(w, "<text x=\"%d\" y=\"%d\">%s</text>\n", plotX+plotW+50, ly+4, xmlText(p))
	}
}

// niceStep returns a step of 1, 2 or 5 times a power of ten that cuts span
// into at most 10 intervals (and at least 0.1).
func niceStep(span float64) float64 {
	for _, s := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 20} {
		if span <= 10*s {
			return s
		}
	}
	return 20
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
