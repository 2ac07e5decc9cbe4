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
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/replay"
	"github.com/cachekit/cachekit/bench/internal/report"
)

func main() {
	cli.Main("replay", run)
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
	fs := cli.NewFlagSet("replay", stderr)
	dir := fs.String("traces-dir", "../shared/traces", "where the traces are")
	traces := fs.String("traces", defaultTraces(), "name@capacity,…")
	caches := fs.String("caches", "cachekit,otter,theine,ristretto,lru,xsync", "caches")
	gs := fs.String("goroutines", fmt.Sprintf("%d,%d", procs, 4*procs), "goroutine counts")
	rounds := fs.Int("rounds", 3, "rounds")
	var out cli.Output
	out.Flags(fs, false)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var rep replay.Report
	err := out.Load(&rep, func() error {
		ts, err := replay.ParseTraces(*traces)
		if err != nil {
			return err
		}
		infos, err := adapter.Select(*caches)
		if err != nil {
			return err
		}
		goroutines, err := cli.Ints(*gs, cli.Positive)
		var bad *cli.IntError
		if errors.As(err, &bad) {
			return fmt.Errorf("-goroutines: bad count %q: %v", bad.Field, bad.Err)
		}
		if *rounds < 1 {
			return fmt.Errorf("-rounds must be positive")
		}
		start := time.Now()
		rep = replay.Report{Header: out.Header("./bench/cmd/replay", args), Dir: *dir, Rounds: *rounds, Goroutines: goroutines}
		rep.Method = report.Count(*rounds, "round") + ", a fresh cache per replay, caches interleaved; medians"
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
		return nil
	})
	if err != nil {
		return err
	}
	// The tables of the chart's goroutine count: the most.
	g, ok := rep.MostGoroutines()
	if !ok {
		return fmt.Errorf("%s: no goroutine counts", out.FromJSON)
	}
	for _, t := range rep.Traces {
		fmt.Fprintf(stdout, "# %s @%d, %d goroutines\n\n%s", t.Name, t.Capacity, g, rep.Table(t.Trace, g))
	}
	return out.Write(&rep, cli.OneChart(rep.Chart), func(charts []string) string { return rep.Markdown(charts[0]) })
}
