// Command hitratio replays the traces of ../shared/traces through
// cachekit's policies, the real cachekit.Cache, the peer caches (otter,
// theine, ristretto, golang-lru's LRU, 2Q and ARC) and Bélády's optimum, at
// the capacities of the traces README's suite table, and writes
// docs/benchmarks/hit-ratio.md with one chart per trace.
//
// Run it from the repository root:
//
//	go run ./bench/cmd/hitratio [-traces ../shared/traces] [-md docs/benchmarks/hit-ratio.md]
//	    [-json FILE] [-chart-dir docs/benchmarks] [-runs 3] [-only trace,trace] [-caches c,c]
//
// bench/run-hitratio.sh runs it with the published settings.
//
// With -synthetic it replays instead a suite of synthetic traces generated
// in the process, which the default policy was not tuned on (an
// out-of-sample check), and writes docs/benchmarks/hit-ratio-synthetic.md
// unless -md says otherwise (bench/run-all.sh synthetic).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/hitratio"
	benchreport "github.com/cachekit/cachekit/bench/internal/report"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type flags struct {
	traces, md, json, chartDir, chartFormat, only, caches, fromJSON string
	runs, parallel                                                  int
	quiet, isolate, synthetic                                       bool
	mdSet                                                           bool // -md was given
}

// The reports' default documents.
const (
	defaultMD          = "docs/benchmarks/hit-ratio.md"
	defaultSyntheticMD = "docs/benchmarks/hit-ratio-synthetic.md"
)

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	fs := flag.NewFlagSet("hitratio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{}
	fs.StringVar(&f.traces, "traces", "../shared/traces", "the `dir`ectory of the trace files (and of their README)")
	fs.BoolVar(&f.synthetic, "synthetic", false, "replay the synthetic suite instead (traces generated in the process, not used to tune the default policy; -traces is ignored)")
	fs.StringVar(&f.md, "md", defaultMD, "write the Markdown report to `file` (- for stdout, empty for none; with -synthetic the default is docs/benchmarks/hit-ratio-synthetic.md)")
	fs.StringVar(&f.json, "json", "", "write the results as JSON to `file` (- for stdout)")
	fs.StringVar(&f.chartDir, "chart-dir", "docs/benchmarks", "write one chart per trace, hit-ratio-TRACE.png, into `dir` (empty for none)")
	fs.StringVar(&f.chartFormat, "chart-format", "png", "the charts' `format`: png or svg")
	fs.IntVar(&f.runs, "runs", 3, "replay the caches that seed themselves at random `n` times, and report the mean")
	fs.StringVar(&f.only, "only", "", "replay only these `traces` of the suite (comma-separated)")
	fs.StringVar(&f.caches, "caches", "", "replay only these `caches` (comma-separated; default all)")
	fs.StringVar(&f.fromJSON, "from-json", "", "do not replay: draw the report and the charts again from the JSON `file` of an earlier run")
	fs.IntVar(&f.parallel, "parallel", 0, "replays at a time (`n`; default GOMAXPROCS)")
	fs.BoolVar(&f.isolate, "isolate", true, "replay the caches with goroutines of their own (cache, theine, ristretto) one at a time, after the others")
	fs.BoolVar(&f.quiet, "q", false, "do not report progress on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench/cmd/hitratio [flags]\n\n"+
			"Replays the suite of the traces README through our policies, the real Cache, the peers and OPT;\n"+
			"writes a Markdown report with one chart per trace. Flags:\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	// A synthetic run must not write its report over the trace suite's.
	mdSet := false
	fs.Visit(func(fl *flag.Flag) { mdSet = mdSet || fl.Name == "md" })
	f.mdSet = mdSet
	if f.synthetic && !mdSet {
		f.md = defaultSyntheticMD
	}
	if f.runs < 1 {
		return nil, fmt.Errorf("-runs must be at least 1")
	}
	if f.parallel < 0 {
		return nil, fmt.Errorf("-parallel must not be negative")
	}
	switch f.chartFormat {
	case "png", "svg":
	default:
		return nil, fmt.Errorf("-chart-format must be png or svg, not %q", f.chartFormat)
	}
	return f, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "hitratio:", err)
		return 2
	}
	if err := execute(f, args, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "hitratio:", err)
		return 1
	}
	return 0
}

func execute(f *flags, args []string, stdout, stderr io.Writer) error {
	var report hitratio.Report
	if f.fromJSON != "" {
		in, err := os.Open(f.fromJSON)
		if err != nil {
			return err
		}
		report, err = hitratio.ReadJSON(in)
		in.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", f.fromJSON, err)
		}
	} else {
		var err error
		if report, err = measure(f, args, stderr); err != nil {
			return err
		}
	}
	// A report drawn from JSON goes, without -md, to the document of the
	// suite it was measured on, whatever -synthetic says: a synthetic
	// run's report must not replace the real traces' one, nor the reverse.
	if !f.mdSet {
		f.md = defaultMD
		if report.Meta.Synthetic {
			f.md = defaultSyntheticMD
		}
	}
	rs := report.Results
	report.Charts = map[string]string{}
	if f.chartDir != "" {
		if err := os.MkdirAll(f.chartDir, 0o755); err != nil {
			return err
		}
		charts, err := hitratio.WriteCharts(rs, f.chartDir, "hit-ratio-", "."+f.chartFormat)
		if err != nil {
			return err
		}
		base := "."
		if f.md != "" && f.md != "-" {
			base = filepath.Dir(f.md)
		}
		for trace, path := range charts {
			rel, err := filepath.Rel(base, path)
			if err != nil {
				rel = path
			}
			report.Charts[trace] = filepath.ToSlash(rel)
		}
	}
	if err := writeTo(f.md, stdout, func(w io.Writer) error { return hitratio.WriteMarkdown(w, report) }); err != nil {
		return err
	}
	if err := writeTo(f.json, stdout, func(w io.Writer) error { return hitratio.WriteJSON(w, report) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hitratio: %d traces, %d caches, %s\n", len(rs.Traces), len(rs.Caches), rs.Elapsed.Round(time.Second))
	return nil
}

// measure replays the suite as the flags say.
func measure(f *flags, args []string, stderr io.Writer) (hitratio.Report, error) {
	suite, load := hitratio.Suite(), (func(string) ([]uint64, error))(nil)
	if f.synthetic {
		suite, load = hitratio.SyntheticSuite(), hitratio.SyntheticLoad
	} else if readme, err := os.Open(filepath.Join(f.traces, "README.md")); err == nil {
		diffs, err := hitratio.CheckReadme(suite, readme)
		readme.Close()
		if err != nil {
			fmt.Fprintf(stderr, "hitratio: warning: cannot check the suite against %s: %v\n", readme.Name(), err)
		}
		for _, d := range diffs {
			fmt.Fprintf(stderr, "hitratio: warning: the suite differs from the traces README: %s\n", d)
		}
	}
	traces, err := hitratio.SelectTraces(suite, f.only)
	if err != nil {
		return hitratio.Report{}, err
	}
	caches, err := hitratio.SelectContenders(f.caches)
	if err != nil {
		return hitratio.Report{}, err
	}
	parallel := f.parallel
	if parallel == 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	var progress io.Writer
	if !f.quiet {
		progress = stderr
	}
	start := time.Now()
	rs, err := hitratio.Run(hitratio.Config{
		TracesDir: f.traces, Traces: traces, Caches: caches,
		Runs: f.runs, Parallel: parallel, Progress: progress, Isolate: f.isolate, Load: load,
	})
	if err != nil {
		return hitratio.Report{}, err
	}
	meta := hitratio.NewMeta(command(args), start, parallel, f.isolate)
	meta.Synthetic = f.synthetic
	return hitratio.Report{Meta: meta, Results: rs}, nil
}

// writeTo writes to the named file, to stdout for "-", nowhere for "".
// The file is written once it is complete (report.WriteFile), so a write
// that fails leaves the previous one as it was.
func writeTo(name string, stdout io.Writer, write func(io.Writer) error) error {
	switch name {
	case "":
		return nil
	case "-":
		return write(stdout)
	}
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return benchreport.WriteFile(name, b.Bytes())
}

// command returns the command line that reproduces this run's report,
// from the repository root: the arguments, without those that only say
// where else to write (-json) or how much to say while running (-q).
func command(args []string) string {
	parts := []string{"go", "run", "./bench/cmd/hitratio"}
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		switch {
		case !strings.HasPrefix(args[i], "-"):
		case name == "json":
			if !hasValue {
				i++ // and its value
			}
			continue
		case name == "q":
			continue
		}
		parts = append(parts, shellQuote(args[i]))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
