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
//	-capacity N              capacity of the replayed caches (default 100000)
//	-replay-goroutines N     goroutines of the concurrent replay (default 8)
//	-rounds N                rounds (default 3)
//	-md FILE, -json FILE     write the report
//	-chart-dir DIR           where the chart goes (default: the Markdown file's directory)
//	-from-json FILE          draw the report again from a JSON file
//	-note TEXT               a note for the report's header
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
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/visibility"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "visibility:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	procs := runtime.GOMAXPROCS(0)
	fs := flag.NewFlagSet("visibility", flag.ContinueOnError)
	fs.SetOutput(stderr)
	caches := fs.String("caches", "", "caches of the probes (default: the throughput set)")
	gs := fs.String("goroutines", fmt.Sprintf("1,%d,%d", procs, 4*procs), "goroutine counts of the probes")
	probes := fs.Int("probes", 200_000, "inserts, and updates, per probe run")
	replayCaches := fs.String("replay-caches", "", "caches replayed (default: the bounded ones of -caches)")
	capacity := fs.Int("capacity", workload.EvictCapacity, "capacity of the replayed caches")
	replayG := fs.Int("replay-goroutines", 8, "goroutines of the concurrent replay")
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
	var rep visibility.Report
	if *fromJSON != "" {
		if err := report.ReadJSON(*fromJSON, &rep); err != nil {
			return err
		}
	} else {
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
		goroutines, err := parseInts(*gs)
		if err != nil {
			return fmt.Errorf("-goroutines: %w", err)
		}
		if *probes < 1 || *rounds < 1 || *replayG < 1 {
			return fmt.Errorf("-probes, -rounds and -replay-goroutines must be positive")
		}
		start := time.Now()
		rep = visibility.Report{
			Header:           report.NewHeader("./bench/cmd/visibility", args),
			Rounds:           *rounds,
			Probes:           *probes,
			ProbeGoroutines:  goroutines,
			ReplayCapacity:   *capacity,
			ReplayGoroutines: *replayG,
		}
		rep.Note = *note
		rep.Method = fmt.Sprintf("%d rounds, a fresh cache per run, caches interleaved", *rounds)
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
	}
	fmt.Fprint(stdout, rep.ProbeTables("#"))
	fmt.Fprint(stdout, rep.ReplayTable())
	if *jsonFile != "" && *fromJSON == "" {
		if err := report.WriteJSON(*jsonFile, &rep); err != nil {
			return err
		}
	}
	if *mdFile != "" {
		dir := *chartDir
		if dir == "" {
			dir = filepath.Dir(*mdFile)
		}
		chartFile := ""
		if len(rep.ReplayCaches) > 0 {
			name, err := rep.Chart(dir)
			if err != nil {
				return err
			}
			if chartFile, err = filepath.Rel(filepath.Dir(*mdFile), filepath.Join(dir, name)); err != nil {
				chartFile = filepath.Join(dir, name)
			}
		}
		if err := report.WriteFile(*mdFile, []byte(rep.Markdown(chartFile))); err != nil {
			return err
		}
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if n < 1 {
			return nil, fmt.Errorf("%d is not positive", n)
		}
		out = append(out, n)
	}
	return out, nil
}
