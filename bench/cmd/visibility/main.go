// Command visibility measures whether caches' writes are seen: the share
// of Sets that a Get right after does not find (for new keys and for
// updates), and the hit ratio of a concurrent Zipf replay against a
// single-threaded one.
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/visibility [flags]
//
// The flags are:
//
//	-caches LIST             caches of the probes (default: the throughput set)
//	-goroutines LIST         goroutine counts of the probes (default 1,GOMAXPROCS,4×GOMAXPROCS)
//	-probes N                inserts, and updates, per probe run (default 200000)
//	-replay-caches LIST      caches replayed (default: the bounded ones of -caches)
//	-capacity N              capacity of the replayed caches (default 100000, at most 10000000)
//	-replay-goroutines N     goroutines of the concurrent replay (default 8)
//	-rounds N                rounds (default 3)
//	-md FILE, -json FILE     write the report
//	-chart-dir DIR           where the chart goes (default: the Markdown file's directory)
//	-from-json FILE          draw the report again from a JSON file
//	-note TEXT               a note for the report's header
package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/visibility"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

func main() {
	cli.Main("visibility", run)
}

func run(args []string, stdout, stderr io.Writer) error {
	procs := runtime.GOMAXPROCS(0)
	fs := cli.NewFlagSet("visibility", stderr)
	caches := fs.String("caches", "", "caches of the probes (default: the throughput set)")
	// 1, GOMAXPROCS and 4×GOMAXPROCS, each once: on one processor "1,4"
	// (the flag refuses a count given twice).
	defG := fmt.Sprintf("1,%d,%d", procs, 4*procs)
	if procs == 1 {
		defG = "1,4"
	}
	gs := fs.String("goroutines", defG, "goroutine counts of the probes")
	probes := fs.Int("probes", 200_000, "inserts, and updates, per probe run")
	replayCaches := fs.String("replay-caches", "", "caches replayed (default: the bounded ones of -caches)")
	capacity := fs.Int("capacity", workload.EvictCapacity, "capacity of the replayed caches")
	replayG := fs.Int("replay-goroutines", 8, "goroutines of the concurrent replay")
	rounds := fs.Int("rounds", 3, "rounds")
	var out cli.Output
	out.Flags(fs, false)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var rep visibility.Report
	err := out.Load(&rep, func() error {
		infos, err := adapter.Select(*caches)
		if err != nil {
			return err
		}
		var replay []adapter.Info
		if *replayCaches != "" {
			if replay, err = adapter.Select(*replayCaches); err != nil {
				return err
			}
		} else {
			for _, i := range infos {
				if i.Bounded {
					replay = append(replay, i)
				}
			}
		}
		goroutines, err := cli.Ints(*gs, cli.Positive)
		if err != nil {
			return fmt.Errorf("-goroutines: %w", err)
		}
		if *probes < 1 || *rounds < 1 || *replayG < 1 {
			return fmt.Errorf("-probes, -rounds and -replay-goroutines must be positive")
		}
		start := time.Now()
		rep = visibility.Report{
			Header:           out.Header("./bench/cmd/visibility", args),
			Rounds:           *rounds,
			Probes:           *probes,
			ProbeGoroutines:  goroutines,
			ReplayCapacity:   *capacity,
			ReplayGoroutines: *replayG,
		}
		rep.Method = report.Count(*rounds, "round") + ", a fresh cache per run, caches interleaved"
		for _, i := range infos {
			rep.Caches = append(rep.Caches, i.Name)
			rep.Configs = append(rep.Configs, i.Config)
		}
		for _, i := range replay {
			rep.ReplayCaches = append(rep.ReplayCaches, i.Name)
		}
		rep.Results, err = visibility.Measure(visibility.Config{Caches: infos, ProbeGoroutines: goroutines, Probes: *probes,
			ReplayCaches: replay, ReplayCapacity: *capacity, ReplayGoroutines: *replayG, Rounds: *rounds, Progress: stderr})
		if err != nil {
			return err
		}
		rep.Finish(start)
		return nil
	})
	if err != nil {
		return err
	}
	if rep.Results == nil {
		// A file cut short or written by another tool: every table
		// is drawn from the results.
		return fmt.Errorf("%s: no results", out.FromJSON)
	}
	fmt.Fprint(stdout, rep.ProbeTables("#"))
	fmt.Fprint(stdout, rep.ReplayTable())
	// The chart is of the replay, if there was one.
	charts := func(dir string) ([]string, error) {
		if len(rep.ReplayCaches) == 0 {
			return nil, nil
		}
		return cli.OneChart(rep.Chart)(dir)
	}
	return out.Write(&rep, charts, func(charts []string) string {
		if len(charts) == 0 {
			return rep.Markdown("")
		}
		return rep.Markdown(charts[0])
	})
}
