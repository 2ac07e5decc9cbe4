// Command throughput measures the throughput of cachekit and its peers
// side by side and writes the medians as Markdown tables and JSON.
//
// Usage (from the repository root, which has a go.work):
//
//	go run ./bench/cmd/throughput [flags]
//
// Every cache runs every cell (a workload at a read share with a number of
// goroutines) once per round, with a fresh instance each time; rounds are
// interleaved (round 1: every cache, round 2: every cache, ...), and the
// tables show the medians over the rounds, with a bar chart per workload
// and goroutine count. The tables go to standard output, progress to
// standard error. bench/run.sh regenerates docs/benchmarks/throughput.md
// with this command.
//
// The flags are:
//
//	-rounds N        rounds (default 3)
//	-duration D      time per run (default 1s)
//	-caches LIST     comma-separated caches, or "all" (default: every
//	                 cache but 2q and arc, which are there for hit ratios)
//	-workloads LIST  comma-separated workloads (default
//	                 getput,getput-warm,evict-zipf,evict-uniform)
//	-mults LIST      goroutine counts as multiples of GOMAXPROCS
//	                 (default 1,4,16)
//	-reads LIST      read shares (percent) to run, of each workload's own
//	                 (getput, getput-warm: 100,75,50,25,0; evicting:
//	                 100,90,75,50), each one some workload's;
//	                 default all
//	-capacity N      capacity of the evicting workloads (default 100000,
//	                 at most 10000000)
//	-seed N          seed of the operation streams (default 1)
//	-json FILE       write the report as JSON
//	-md FILE         write the report as a Markdown document
//	-chart-dir DIR   where the charts go (default: the Markdown file's
//	                 directory)
//	-from-json FILE  draw the document and charts again from a JSON
//	                 report instead of measuring
//	-note TEXT       a note for the Markdown document's header
package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/machine"
	"github.com/cachekit/cachekit/bench/internal/report"
	"github.com/cachekit/cachekit/bench/internal/throughput"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

func main() {
	cli.Main("throughput", run)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("throughput", stderr)
	var f flags
	fs.IntVar(&f.rounds, "rounds", 3, "rounds; every cache runs every cell once per round")
	fs.DurationVar(&f.duration, "duration", time.Second, "time per run")
	fs.StringVar(&f.caches, "caches", "", `comma-separated caches, or "all" (default: all but 2q and arc); known: `+strings.Join(adapter.Names(), ", "))
	fs.StringVar(&f.workloads, "workloads", strings.Join(workload.Names, ","), "comma-separated workloads")
	fs.StringVar(&f.mults, "mults", "1,4,16", "goroutine counts as multiples of GOMAXPROCS")
	fs.StringVar(&f.reads, "reads", "", "comma-separated read shares in percent to run, of each workload's own (default: all of them)")
	fs.IntVar(&f.capacity, "capacity", workload.EvictCapacity, "capacity of the evicting workloads")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the operation streams")
	var out cli.Output
	out.Flags(fs, true)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	rep := &throughput.Report{}
	if err := out.Load(rep, func() error { return measure(rep, args, f, out.Note, stderr) }); err != nil {
		return err
	}
	// A report read back (-from-json) may predate the paired ratios.
	throughput.SetRatios(rep.Results)
	if err := throughput.WriteTables(stdout, rep); err != nil {
		return err
	}
	return out.Write(rep, func(dir string) ([]string, error) { return throughput.Charts(rep, dir) },
		func(charts []string) string {
			var b strings.Builder
			throughput.WriteMarkdown(&b, rep, charts) // a strings.Builder does not fail
			return b.String()
		})
}

// flags are the command's flags that say what to measure.
type flags struct {
	rounds                          int
	duration                        time.Duration
	caches, workloads, mults, reads string
	capacity                        int
	seed                            uint64
}

// measure runs the measurement that f describes and fills rep; args are
// the command's arguments, for the report's header.
func measure(rep *throughput.Report, args []string, f flags, note string, stderr io.Writer) error {
	if f.rounds < 1 {
		return fmt.Errorf("-rounds must be at least 1")
	}
	if f.duration <= 0 {
		return fmt.Errorf("-duration must be positive")
	}
	infos, err := adapter.Select(f.caches)
	if err != nil {
		return err
	}
	ms, err := cli.Ints(f.mults, cli.Positive)
	if err != nil {
		return fmt.Errorf("-mults: %w", err)
	}
	var keep []int // -reads, if given
	if f.reads != "" {
		if keep, err = cli.Ints(f.reads, percentage); err != nil {
			return fmt.Errorf("-reads: %w", err)
		}
	}
	var ws []*workload.Workload
	for name := range strings.SplitSeq(f.workloads, ",") {
		w, err := workload.ByName(strings.TrimSpace(name), f.capacity)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(ws, func(x *workload.Workload) bool { return x.Name == w.Name }) {
			return fmt.Errorf("workload %q named twice", w.Name)
		}
		if keep != nil {
			w.ReadPcts = slices.DeleteFunc(w.ReadPcts, func(p int) bool { return !slices.Contains(keep, p) })
			if len(w.ReadPcts) == 0 {
				return fmt.Errorf("-reads %s leaves workload %s nothing to run", f.reads, w.Name)
			}
		}
		ws = append(ws, w)
	}
	// A share that no workload runs (a typo: 7 for 75) would be dropped
	// without a word next to one that some workload runs.
	for _, p := range keep {
		if !slices.ContainsFunc(ws, func(w *workload.Workload) bool { return slices.Contains(w.ReadPcts, p) }) {
			return fmt.Errorf("-reads %s: no workload runs %d%% reads", f.reads, p)
		}
	}

	h := report.NewHeader("./bench/cmd/throughput", args)
	*rep = throughput.Report{
		Command:    h.Command,
		Date:       h.Date,
		GoVersion:  h.GoVersion,
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		CPU:        h.CPU,
		Cores:      h.Cores,
		GOMAXPROCS: h.GOMAXPROCS,
		Revision:   h.Revision,
		Modules:    peerModules(),
		LoadBefore: h.LoadBefore,
		Note:       note,
		Rounds:     f.rounds,
		Duration:   f.duration.String(),
		Mults:      ms,
		Caches:     throughput.DescribeCaches(infos),
		Workloads:  throughput.DescribeWorkloads(ws),
	}
	measured, err := throughput.Measure(throughput.Config{
		Caches:    infos,
		Workloads: ws,
		Mults:     ms,
		Rounds:    f.rounds,
		Duration:  f.duration,
		Seed:      f.seed,
		Progress:  stderr,
	})
	if err != nil {
		return err
	}
	rep.LoadAfter = machine.LoadAverage()
	rep.Results = throughput.Results(measured)
	return nil
}

// percentage is the check of -reads.
func percentage(n int) error {
	if n < 0 || n > 100 {
		return fmt.Errorf("%d is not a percentage", n)
	}
	return nil
}

// peers are the modules whose versions the reports name.
var peers = []string{
	"github.com/maypok86/otter/v2",
	"github.com/Yiling-J/theine-go",
	"github.com/dgraph-io/ristretto/v2",
	"github.com/hashicorp/golang-lru/v2",
	"github.com/hashicorp/golang-lru/arc/v2",
	"github.com/patrickmn/go-cache",
	"github.com/puzpuzpuz/xsync/v4",
}

// peerModules returns the versions of the peers linked into the binary.
func peerModules() []throughput.Module {
	var out []throughput.Module
	for _, m := range report.LinkedModules(peers) {
		out = append(out, throughput.Module(m))
	}
	return out
}
