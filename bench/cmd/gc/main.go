// Command gc measures what a cache full of entries costs the garbage
// collector: for each cache holding 2M and 10M entries of 100-byte values
// (and empty), the duration of a forced GC, the GC's CPU time under a
// steady churn, and an unrelated allocating request loop's p99.9, each
// cache in a fresh process; with a baseline without any cache and a plain
// map[string][]byte.
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/gc [flags]
//
// The flags are:
//
//	-caches LIST        caches (default: all of gc.md)
//	-sizes LIST         entry counts; 0 is an empty cache (default 0,2000000,10000000)
//	-value-bytes N      bytes per value (default 100)
//	-forced N           forced collections timed (default 5)
//	-churn N            Sets per second of the churn (default 100000)
//	-requests N         requests per second of the request loop (default 20000)
//	-min-window D       the churn lasts at least D (default 10s)
//	-min-cycles N       … and until N collections finished (default 3)
//	-max-window D       … but at most D (default 60s)
//	-rounds N           rounds (default 1)
//	-seed N             seed of the churn's keys (default 1)
//	-md FILE, -json FILE, -chart-dir DIR, -from-json FILE, -note TEXT
package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
	"github.com/cachekit/cachekit/bench/internal/report"
)

func main() {
	if cli.Child("gc", gcimpact.RunJob) {
		return
	}
	cli.Main("gc", run)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("gc", stderr)
	caches := fs.String("caches", "", "caches (default: "+strings.Join(gcimpact.DefaultCaches, ",")+")")
	sizes := fs.String("sizes", "0,2000000,10000000", "entry counts; 0 is an empty cache")
	valueBytes := fs.Int("value-bytes", 100, "bytes per value")
	forced := fs.Int("forced", 5, "forced collections timed")
	churn := fs.Int("churn", 100_000, "Sets per second of the churn")
	requests := fs.Int("requests", 20_000, "requests per second of the request loop")
	minWindow := fs.Duration("min-window", 10*time.Second, "the churn lasts at least this long")
	minCycles := fs.Int("min-cycles", 3, "… and until this many collections finished")
	maxWindow := fs.Duration("max-window", 60*time.Second, "… but at most this long")
	rounds := fs.Int("rounds", 1, "rounds")
	seed := fs.Uint64("seed", 1, "seed of the churn's keys")
	var out cli.Output
	out.Flags(fs, true)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var rep gcimpact.Report
	err := out.Load(&rep, func() error {
		infos, err := adapter.SelectStrings(*caches, gcimpact.DefaultCaches)
		if err != nil {
			return err
		}
		var names []string
		for _, i := range infos {
			names = append(names, i.Name)
		}
		ss, err := cli.Ints(*sizes, notNegative)
		if err != nil {
			return fmt.Errorf("-sizes: %w", err)
		}
		tmpl := gcimpact.Job{ValueBytes: *valueBytes, ForcedGCs: *forced, ChurnRate: *churn, RequestRate: *requests,
			MinWindow: *minWindow, MaxWindow: *maxWindow, MinCycles: *minCycles, Seed: *seed}
		if *valueBytes < 1 || *forced < 1 || *churn < 0 || *requests < 1 || *minWindow <= 0 || *maxWindow < *minWindow || *rounds < 1 {
			return fmt.Errorf("bad flags: sizes, counts and durations must be positive, -max-window at least -min-window")
		}
		if *minCycles < 0 {
			return fmt.Errorf("-min-cycles %d is negative", *minCycles)
		}
		start := time.Now()
		rep = gcimpact.Report{Header: out.Header("./bench/cmd/gc", args), Sizes: ss, Template: tmpl, Rounds: *rounds,
			Caches: gcimpact.Describe(names)}
		rep.Method = report.Count(*rounds, "round") + "; every cache and size in a fresh process; medians"
		rep.Results, err = gcimpact.Measure(gcimpact.Config{Caches: names, Sizes: ss, Template: tmpl, Rounds: *rounds, Progress: stderr})
		if err != nil {
			return err
		}
		rep.Finish(start)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.SummaryTable("forced GC ms", func(x gcimpact.Row) string { return fmt.Sprintf("%.2f", x.ForcedMs) }))
	return out.Write(&rep, func(dir string) ([]string, error) { return rep.Charts(dir, "gc", nil) }, rep.Markdown)
}

// notNegative is the check of -sizes: 0 is an empty cache.
func notNegative(n int) error {
	if n < 0 {
		return fmt.Errorf("%d is negative", n)
	}
	return nil
}
