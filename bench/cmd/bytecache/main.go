// Command bytecache writes docs/benchmarks/bytecache.md: cachekit's
// bytecache against bigcache v3, freecache and fastcache in one run — the
// articles' table for the byte caches (1M encoded structs: memory, and
// parallel ns/op at 10%, 0.1%, 0% and 100% writes) and the GC experiment
// with 10M entries (forced GC, GC CPU under churn, an unrelated request
// loop's p99.9) against an empty cache, no cache and a map[string][]byte
// — and checks the bytecache issue's targets.
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/bytecache [flags]
//
// The flags are:
//
//	-entries N        entries of the articles' table (default 1000000)
//	-goroutines N     goroutines of its timed runs (default GOMAXPROCS)
//	-duration D       time of each timed run (default 1s)
//	-rounds N         rounds of the articles' table (default 3)
//	-gc-entries N     entries of the GC experiment (default 10000000)
//	-gc-rounds N      rounds of the GC experiment (default 1)
//	-md FILE, -json FILE, -chart-dir DIR, -from-json FILE, -note TEXT
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/bytereport"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/gcimpact"
	"github.com/cachekit/cachekit/bench/internal/report"
)

// The children are told which job they get by their arguments.
var (
	articlesChild = []string{"-child", "articles"}
	gcChild       = []string{"-child", "gc"}
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-child" {
		if err := runChild(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "bytecache child:", err)
			os.Exit(1)
		}
		return
	}
	cli.Main("bytecache", run)
}

func runChild(kind string) error {
	switch kind {
	case "articles":
		return cli.DoJob(articles.RunJob)
	case "gc":
		return cli.DoJob(gcimpact.RunJob)
	}
	return fmt.Errorf("unknown child %q", kind)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("bytecache", stderr)
	entries := fs.Int("entries", 1_000_000, "entries of the articles' table")
	goroutines := fs.Int("goroutines", runtime.GOMAXPROCS(0), "goroutines of its timed runs")
	duration := fs.Duration("duration", time.Second, "time of each timed run")
	rounds := fs.Int("rounds", 3, "rounds of the articles' table")
	gcEntries := fs.Int("gc-entries", 10_000_000, "entries of the GC experiment")
	gcRounds := fs.Int("gc-rounds", 1, "rounds of the GC experiment")
	var out cli.Output
	out.Flags(fs, true)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var rep bytereport.Report
	err := out.Load(&rep, func() error {
		if *entries < 1 || *goroutines < 1 || *duration <= 0 || *rounds < 1 || *gcEntries < 1 || *gcRounds < 1 {
			return fmt.Errorf("every count and duration must be positive")
		}
		start := time.Now()
		rep.Header = out.Header("./bench/cmd/bytecache", args)
		rep.Method = method(*rounds, *gcRounds)
		rep.Articles = articles.Report{Header: rep.Header, Entries: *entries, Goroutines: *goroutines, Duration: duration.String(),
			Rounds: *rounds, WritePcts: bytereport.WritePcts, Caches: articles.Describe(bytereport.Caches)}
		res, err := articles.Measure(articles.Config{Caches: bytereport.Caches, Entries: *entries, Goroutines: *goroutines, Duration: *duration,
			Rounds: *rounds, Seed: 1, WritePcts: bytereport.WritePcts, Args: articlesChild, Progress: stderr})
		if err != nil {
			return err
		}
		for i := range rep.Articles.Caches {
			rep.Articles.Caches[i].Results = res[rep.Articles.Caches[i].Name]
		}
		tmpl := gcimpact.Job{ValueBytes: 100, ForcedGCs: 5, ChurnRate: 100_000, RequestRate: 20_000,
			MinWindow: 10 * time.Second, MaxWindow: 60 * time.Second, MinCycles: 3, Seed: 1}
		sizes := []int{0, *gcEntries}
		rep.GC = gcimpact.Report{Header: rep.Header, Sizes: sizes, Template: tmpl, Rounds: *gcRounds, Caches: gcimpact.Describe(bytereport.GCCaches)}
		rep.GC.Results, err = gcimpact.Measure(gcimpact.Config{Caches: bytereport.GCCaches, Sizes: sizes, Template: tmpl, Rounds: *gcRounds,
			Args: gcChild, Progress: stderr})
		if err != nil {
			return err
		}
		rep.Finish(start)
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range rep.Targets() {
		fmt.Fprintf(stdout, "%-70s %-5v %s\n", t.What, t.Met, t.Measured)
	}
	charts := func(dir string) ([]string, error) {
		a, err := rep.Articles.Charts(dir, "bytecache", nil)
		if err != nil {
			return nil, err
		}
		g, err := rep.GC.Charts(dir, "bytecache-gc", append([]string{gcimpact.None}, bytereport.GCCaches...))
		if err != nil {
			return nil, err
		}
		return append(a, g...), nil
	}
	return out.Write(&rep, charts, rep.Markdown)
}

// method is the header's line on how the figures were taken.
func method(rounds, gcRounds int) string {
	return fmt.Sprintf("articles' table: %s; GC experiment: %s; every cache in a fresh process; medians",
		report.Count(rounds, "round"), report.Count(gcRounds, "round"))
}
