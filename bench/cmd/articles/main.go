// Command articles measures the comparison table of the article
// "Implementing robust in-memory cache with Go" for cachekit and every
// peer in one run: 1M entries of struct{int; bool; string}, the memory
// they hold after a GC, and ns/op of parallel reads and writes at 10% and
// 0.1% writes. Each cache runs in a fresh process, round after round.
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/articles [flags]
//
// The flags are:
//
//	-caches LIST      comma-separated caches (default: every one of the table)
//	-entries N        entries (default 1000000)
//	-goroutines N     goroutines of the timed runs (default GOMAXPROCS)
//	-duration D       time of each timed run (default 1s)
//	-rounds N         rounds (default 3)
//	-seed N           seed of the operation streams (default 1)
//	-md FILE          write the Markdown report
//	-json FILE        write the results as JSON
//	-chart-dir DIR    where the charts go (default: the Markdown file's directory)
//	-from-json FILE   draw the report again from a JSON file instead of measuring
//	-note TEXT        a note for the report's header
//
// The table goes to standard output, progress to standard error.
package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/report"
)

func main() {
	if cli.Child("articles", articles.RunJob) {
		return
	}
	cli.Main("articles", run)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("articles", stderr)
	caches := fs.String("caches", "", "comma-separated caches (default: "+strings.Join(articles.DefaultCaches, ",")+")")
	entries := fs.Int("entries", 1_000_000, "entries")
	goroutines := fs.Int("goroutines", runtime.GOMAXPROCS(0), "goroutines of the timed runs")
	duration := fs.Duration("duration", time.Second, "time of each timed run")
	rounds := fs.Int("rounds", 3, "rounds")
	seed := fs.Uint64("seed", 1, "seed of the operation streams")
	var out cli.Output
	out.Flags(fs, true)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var rep articles.Report
	err := out.Load(&rep, func() error {
		if *entries < 1 || *goroutines < 1 || *duration <= 0 || *rounds < 1 {
			return fmt.Errorf("-entries, -goroutines, -duration and -rounds must be positive")
		}
		infos, err := adapter.SelectStrings(*caches, articles.DefaultCaches)
		if err != nil {
			return err
		}
		var names []string
		for _, i := range infos {
			if i.Serial {
				return fmt.Errorf("%s is not safe for concurrent use", i.Name)
			}
			names = append(names, i.Name)
		}
		start := time.Now()
		rep = articles.Report{
			Header:     out.Header("./bench/cmd/articles", args),
			Entries:    *entries,
			Goroutines: *goroutines,
			Duration:   duration.String(),
			Rounds:     *rounds,
			WritePcts:  articles.WritePcts,
			Caches:     articles.Describe(names),
		}
		rep.Method = method(*rounds)
		results, err := articles.Measure(articles.Config{Caches: names, Entries: *entries, Goroutines: *goroutines,
			Duration: *duration, Rounds: *rounds, Seed: *seed, Progress: stderr})
		if err != nil {
			return err
		}
		for i := range rep.Caches {
			rep.Caches[i].Results = results[rep.Caches[i].Name]
		}
		rep.Finish(start)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.Table(nil, "cachekit"))
	return out.Write(&rep, func(dir string) ([]string, error) { return rep.Charts(dir, "articles", nil) }, rep.Markdown)
}

// method is the header's line on how the figures were taken.
func method(rounds int) string {
	return report.Count(rounds, "round") + "; each cache in a fresh process per round, caches interleaved; medians"
}
