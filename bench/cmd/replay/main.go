// Command replay replays real access traces through cachekit and its
// peers from N goroutines at once (Get a batch of keys, Set the misses)
// and reports the hit ratio, the time per Get and per Set, and requests
// per second.
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/replay [flags]
//
// The flags are:
//
//	-traces-dir DIR    where the traces are (default ../shared/traces, relative to the repository root)
//	-traces LIST       name@capacity,… (default arc-oltp@5000,arc-p3@100000,scarab-recs@50000,cache2k-web12@800,zipf-1.0001@10000)
//	-caches LIST       caches (default cachekit,otter,theine,ristretto,lru,xsync)
//	-goroutines LIST   goroutine counts (default GOMAXPROCS,4×GOMAXPROCS)
//	-rounds N          rounds (default 3)
//	-md FILE, -json FILE, -chart-dir DIR, -from-json FILE, -note TEXT
//
// Traces are read, never copied into the repository.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/replay"
	"github.com/cachekit/cachekit/bench/internal/report"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "replay:", err)
		}
		os.Exit(2)
	}
}

// defaultTraces is the -traces default.
func defaultTraces() string {
	var parts []string
	for _, t := range replay.DefaultTraces {
		parts = append(parts, fmt.Sprintf("%s@%d", t.Name, t.Capacity))
	}
	return strings.Join(parts, ",")
}

func run(args []string, stdout, stderr io.Writer) error {
	procs := runtime.GOMAXPROCS(0)
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("traces-dir", "../shared/traces", "where the traces are")
	traces := fs.String("traces", defaultTraces(), "name@capacity,…")
	caches := fs.String("caches", "cachekit,otter,theine,ristretto,lru,xsync", "caches")
	gs := fs.String("goroutines", fmt.Sprintf("%d,%d", procs, 4*procs), "goroutine counts")
	rounds := fs.Int("rounds", 3, "rounds")
	mdFile := fs.String("md", "", "write the Markdown report to this file")
	jsonFile := fs.String("json", "", "write the results as JSON to this file")
	chartDir := fs.String("chart-dir", "", "where the chart goes (default: the Markdown file's directory)")
	fromJSON := fs.String("from-json", "", "draw the report from this JSON file instead of measuring")
	note := fs.String("note", "", "a note for the report's header")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var rep replay.Report
	if *fromJSON != "" {
		if err := report.ReadJSON(*fromJSON, &rep); err != nil {
			return err
		}
	} else {
		ts, err := replay.ParseTraces(*traces)
		if err != nil {
			return err
		}
		infos, err := adapter.Select(*caches)
		if err != nil {
			return err
		}
		var goroutines []int
		for f := range strings.SplitSeq(*gs, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("-goroutines: bad count %q", f)
			}
			goroutines = append(goroutines, n)
		}
		if *rounds < 1 {
			return fmt.Errorf("-rounds must be positive")
		}
		start := time.Now()
		rep = replay.Report{Header: report.NewHeader("./bench/cmd/replay", args), Dir: *dir, Rounds: *rounds, Goroutines: goroutines}
		rep.Note = *note
		rep.Method = fmt.Sprintf("%d rounds, a fresh cache per replay, caches interleaved; medians", *rounds)
		for _, i := range infos {
			rep.Caches = append(rep.Caches, i.Name)
			rep.Configs = append(rep.Configs, i.Config)
		}
		rep.Traces, rep.Results, err = replay.Measure(replay.Config{Dir: *dir, Traces: ts, Caches: infos, Goroutines: goroutines,
			Rounds: *rounds, Progress: stderr})
		if err != nil {
			return err
		}
		rep.Finish(start)
	}
	for _, t := range rep.Traces {
		fmt.Fprintf(stdout, "# %s @%d, %d goroutines\n\n%s", t.Name, t.Capacity, rep.Goroutines[len(rep.Goroutines)-1], rep.Table(t.Name, rep.Goroutines[len(rep.Goroutines)-1]))
	}
	if *jsonFile != "" && *fromJSON == "" {
		if err := report.WriteJSON(*jsonFile, &rep); err != nil {
			return err
		}
	}
	if *mdFile != "" {
		cd := *chartDir
		if cd == "" {
			cd = filepath.Dir(*mdFile)
		}
		name, err := rep.Chart(cd)
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(filepath.Dir(*mdFile), filepath.Join(cd, name)); err == nil {
			name = rel
		}
		if err := report.WriteFile(*mdFile, []byte(rep.Markdown(name))); err != nil {
			return err
		}
	}
	return nil
}
