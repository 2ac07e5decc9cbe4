package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cachekit/cachekit/internal/atomicfile"
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
	traces      []simTrace
	capacities  []int
	policies    []string
	format      string
	chart       string // the chart's file, or ""
	chartFormat string // its format: svg, png or pdf
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
		if err := writeChart(&buf, f.chartFormat, rows); err != nil {
			fmt.Fprintln(stderr, "cachekit sim: chart:", err)
			return 1
		}
		if err := atomicfile.WriteFile(f.chart, buf.Bytes()); err != nil {
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
	chart := fs.String("chart", "", "also draw hit ratio against capacity to `file`, in the format of its extension (.svg, .png or .pdf)")
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
	if f.chart != "" {
		var err error
		if f.chartFormat, err = chartFormat(f.chart); err != nil {
			return nil, err
		}
		if err := atomicfile.CheckWritable(f.chart); err != nil {
			return nil, fmt.Errorf("-chart: %w", err)
		}
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
		// One spelling per spec, spaces around the name and the
		// parameter being ignored: "lrfu : 0.5" is one row with
		// "lrfu:0.5", named so.
		name, arg, hasArg := strings.Cut(strings.ToLower(p), ":")
		p = strings.TrimSpace(name)
		if hasArg {
			p += ":" + strings.TrimSpace(arg)
		}
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
		if !slices.ContainsFunc(f.traces, func(t simTrace) bool { return t.name == tr.name }) {
			f.traces = append(f.traces, tr)
		}
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

// resolveTrace finds the files of a trace spec: FILE[+FILE...], each FILE
// trimmed of spaces, where a FILE that does not exist but has no directory part may be a bare name
// in dir.
func resolveTrace(spec, dir string) (simTrace, error) {
	spec = strings.TrimSpace(spec)
	tr := simTrace{name: spec}
	if spec == "" {
		return tr, errors.New("empty trace name in -trace")
	}
	names := strings.Split(spec, "+")
	for i, name := range names {
		name = strings.TrimSpace(name)
		names[i] = name
		path, err := resolveFile(name, dir)
		if err != nil && name == "" {
			err = fmt.Errorf("trace %q: empty file name", spec)
		}
		if err != nil {
			return tr, err
		}
		tr.files = append(tr.files, path)
	}
	// The name without the spaces around its files, so that "a + b" and
	// "a+b" are one trace.
	tr.name = strings.Join(names, "+")
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
