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
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/machine"

	"github.com/cachekit/cachekit/bench/internal/stampede"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "stampede:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stampede", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 20, "rounds per cache and case")
	callers := fs.Int("callers", 1000, "goroutines per stampede")
	load := fs.Duration("load", 10*time.Millisecond, "the loader's latency")
	caches := fs.String("caches", "all", "comma-separated caches, or \"all\"; known: "+strings.Join(stampede.Names(), ", "))
	cases := fs.String("cases", "cold,hot", "comma-separated cases: cold, hot")
	mdFile := fs.String("md", "", "write the report as Markdown to this file")
	note := fs.String("note", "", "a note for the Markdown document's header")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
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

	rep := &stampede.Report{
		Command:    machine.CommandLine("./bench/cmd/stampede", args),
		Date:       time.Now().UTC().Format("2006-01-02 15:04 MST"),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPU:        machine.CPUModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Revision:   machine.Revision(),
		Modules:    peerModules(),
		LoadBefore: machine.LoadAverage(),
		Note:       *note,
		Rounds:     *rounds,
		Callers:    *callers,
		LoadTime:   *load,
		Caches:     fs2,
	}
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
	rep.LoadAfter = machine.LoadAverage()
	if err := stampede.WriteTables(stdout, rep); err != nil {
		return err
	}
	if *mdFile != "" {
		var b bytes.Buffer
		if err := stampede.WriteMarkdown(&b, rep); err != nil {
			return err
		}
		if err := os.WriteFile(*mdFile, b.Bytes(), 0o644); err != nil {
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

// peerModules returns the versions of the peers linked into the binary.
func peerModules() []stampede.Module {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var out []stampede.Module
	for _, p := range peers {
		for _, d := range bi.Deps {
			if d.Path == p {
				out = append(out, stampede.Module{Path: d.Path, Version: d.Version})
			}
		}
	}
	return out
}
