// Command stampede runs the stampede scenario of the [loading] issue
// (1000 goroutines released together on one key whose loader takes 10ms,
// on a cold key and on an expired hot key) against cachekit's loading
// package and its peers, and writes the loader calls and the callers'
// latency percentiles as Markdown tables.
//
// Usage (from the repository root, which has a go.work):
//
//	go run ./bench/cmd/stampede [flags]
//
// The tables go to standard output, progress to standard error. The
// flags are:
//
//	-rounds N      rounds per cache and case (default 20)
//	-callers N     goroutines per stampede (default 1000)
//	-load D        the loader's latency (default 10ms)
//	-caches LIST   comma-separated caches, or "all" (default all)
//	-cases LIST    comma-separated cases: cold, hot (default both)
//	-md FILE       write the report as a Markdown document
//	-note TEXT     a note for the Markdown document's header
package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/stampede"
)

func main() {
	cli.Main("stampede", run)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("stampede", stderr)
	rounds := fs.Int("rounds", 20, "rounds per cache and case")
	callers := fs.Int("callers", 1000, "goroutines per stampede")
	load := fs.Duration("load", 10*time.Millisecond, "the loader's latency")
	caches := fs.String("caches", "all", "comma-separated caches, or \"all\"; known: "+strings.Join(stampede.Names(), ", "))
	cases := fs.String("cases", "cold,hot", "comma-separated cases: cold, hot")
	mdFile := fs.String("md", "", "write the report as Markdown to this file")
	note := fs.String("note", "", "a note for the Markdown document's header")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds must be at least 1")
	}
	if *callers < 1 {
		return fmt.Errorf("-callers must be at least 1")
	}
	if *load < 0 {
		return fmt.Errorf("-load must not be negative")
	}
	fs2, err := stampede.Select(*caches)
	if err != nil {
		return err
	}
	var cs []stampede.Case
	for name := range strings.SplitSeq(*cases, ",") {
		c := stampede.Case(strings.TrimSpace(name))
		if !slices.Contains(stampede.Cases, c) {
			return fmt.Errorf("unknown case %q (known: cold, hot)", c)
		}
		if slices.Contains(cs, c) {
			return fmt.Errorf("case %q named twice", c)
		}
		cs = append(cs, c)
	}

	start := time.Now()
	rep := &stampede.Report{
		Header:   report.NewHeader("./bench/cmd/stampede", args),
		Rounds:   *rounds,
		Callers:  *callers,
		LoadTime: *load,
		Caches:   fs2,
	}
	rep.Modules = report.LinkedModules(peers)
	rep.Note = *note
	rep.Results, err = stampede.Measure(stampede.Config{
		Caches:   fs2,
		Cases:    cs,
		Rounds:   *rounds,
		Params:   stampede.Params{Callers: *callers, LoadTime: *load},
		Progress: stderr,
	})
	if err != nil {
		return err
	}
	rep.Finish(start)
	if err := stampede.WriteTables(stdout, rep); err != nil {
		return err
	}
	if *mdFile != "" {
		if err := cli.WriteTo(*mdFile, func(w io.Writer) error { return stampede.WriteMarkdown(w, rep) }); err != nil {
			return err
		}
	}
	return nil
}

// peers are the modules whose versions the report names.
var peers = []string{
	"golang.org/x/sync",
	"github.com/maypok86/otter/v2",
	"github.com/viccon/sturdyc",
}
