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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/articles"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/subproc"
)

func main() {
	var job articles.Job
	child, err := subproc.Job(&job)
	if child {
		if err == nil {
			err = runChild(job)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "articles child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "articles:", err)
		}
		os.Exit(2)
	}
}

func runChild(j articles.Job) error {
	r, err := articles.RunJob(j)
	if err != nil {
		return err
	}
	return subproc.Reply(r)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("articles", flag.ContinueOnError)
	fs.SetOutput(stderr)
	caches := fs.String("caches", "", "comma-separated caches (default: "+strings.Join(articles.DefaultCaches, ",")+")")
	entries := fs.Int("entries", 1_000_000, "entries")
	goroutines := fs.Int("goroutines", runtime.GOMAXPROCS(0), "goroutines of the timed runs")
	duration := fs.Duration("duration", time.Second, "time of each timed run")
	rounds := fs.Int("rounds", 3, "rounds")
	seed := fs.Uint64("seed", 1, "seed of the operation streams")
	mdFile := fs.String("md", "", "write the Markdown report to this file")
	jsonFile := fs.String("json", "", "write the results as JSON to this file")
	chartDir := fs.String("chart-dir", "", "where the charts go (default: the Markdown file's directory)")
	fromJSON := fs.String("from-json", "", "draw the report from this JSON file instead of measuring")
	note := fs.String("note", "", "a note for the report's header")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var rep articles.Report
	if *fromJSON != "" {
		if err := report.ReadJSON(*fromJSON, &rep); err != nil {
			return err
		}
	} else {
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
			Header:     report.NewHeader("./bench/cmd/articles", args),
			Entries:    *entries,
			Goroutines: *goroutines,
			Duration:   duration.String(),
			Rounds:     *rounds,
			WritePcts:  articles.WritePcts,
			Caches:     articles.Describe(names),
		}
		rep.Note = *note
		rep.Method = fmt.Sprintf("%d rounds; each cache in a fresh process per round, caches interleaved; medians", *rounds)
		results, err := articles.Measure(articles.Config{Caches: names, Entries: *entries, Goroutines: *goroutines,
			Duration: *duration, Rounds: *rounds, Seed: *seed, Progress: stderr})
		if err != nil {
			return err
		}
		for i := range rep.Caches {
			rep.Caches[i].Results = results[rep.Caches[i].Name]
		}
		rep.Finish(start)
	}
	fmt.Fprint(stdout, rep.Table(nil, "cachekit"))
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
		charts, err := rep.Charts(dir, "articles", nil)
		if err != nil {
			return err
		}
		rel := make([]string, len(charts))
		for i, c := range charts {
			rel[i] = relTo(filepath.Dir(*mdFile), filepath.Join(dir, c))
		}
		if err := report.WriteFile(*mdFile, []byte(rep.Markdown(rel))); err != nil {
			return err
		}
	}
	return nil
}

// relTo returns path relative to dir, or path itself if it has none.
func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
