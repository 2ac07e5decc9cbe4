// Command memory measures the memory per entry of cachekit's Cache, otter,
// theine, ristretto and the byte caches at 1k, 10k, 100k and 1M entries
// with a TTL set, each cache and size in a fresh process.
//
// Usage (from the repository root):
//
//	go run ./bench/cmd/memory [flags]
//
// The flags are:
//
//	-caches LIST     caches (default cachekit,otter,theine,ristretto,map,bigcache,freecache,fastcache,bytecache)
//	-sizes LIST      entry counts (default 1000,10000,100000,1000000)
//	-ttl D           every entry's time to live (default 1h)
//	-rounds N        rounds (default 3)
//	-md FILE, -json FILE, -chart-dir DIR, -from-json FILE, -note TEXT
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/footprint"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/subproc"
)

func main() {
	var job footprint.Job
	child, err := subproc.Job(&job)
	if child {
		if err == nil {
			var r footprint.Result
			if r, err = footprint.RunJob(job); err == nil {
				err = subproc.Reply(r)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "memory child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "memory:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	fs.SetOutput(stderr)
	caches := fs.String("caches", "", "caches (default: "+strings.Join(footprint.DefaultCaches, ",")+")")
	sizes := fs.String("sizes", "1000,10000,100000,1000000", "entry counts")
	ttl := fs.Duration("ttl", time.Hour, "every entry's time to live")
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
	var rep footprint.Report
	if *fromJSON != "" {
		if err := report.ReadJSON(*fromJSON, &rep); err != nil {
			return err
		}
	} else {
		infos, err := adapter.SelectStrings(*caches, footprint.DefaultCaches)
		if err != nil {
			return err
		}
		var ss []int
		for f := range strings.SplitSeq(*sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("-sizes: bad size %q", f)
			}
			ss = append(ss, n)
		}
		if *rounds < 1 || *ttl < 0 {
			return fmt.Errorf("-rounds must be positive and -ttl not negative")
		}
		start := time.Now()
		rep = footprint.Report{Header: report.NewHeader("./bench/cmd/memory", args), Sizes: ss, TTL: report.ShortDuration(*ttl), Rounds: *rounds}
		rep.Note = *note
		rep.Method = fmt.Sprintf("%d rounds; every cache and size in a fresh process; medians", *rounds)
		var names []string
		for _, i := range infos {
			names = append(names, i.Name)
			rep.Caches = append(rep.Caches, i.Name)
			rep.Configs = append(rep.Configs, i.Config)
		}
		rep.Results, err = footprint.Measure(footprint.Config{Caches: names, Sizes: ss, TTL: *ttl, Rounds: *rounds, Progress: stderr})
		if err != nil {
			return err
		}
		rep.Finish(start)
	}
	fmt.Fprint(stdout, rep.HeapTable())
	fmt.Fprint(stdout, rep.RSSTable())
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
		name, err := rep.Chart(dir)
		if err != nil {
			return err
		}
		if rel, err := filepath.Rel(filepath.Dir(*mdFile), filepath.Join(dir, name)); err == nil {
			name = rel
		}
		if err := report.WriteFile(*mdFile, []byte(rep.Markdown(name))); err != nil {
			return err
		}
	}
	return nil
}
