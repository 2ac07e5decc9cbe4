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
//	-churn N         after the fill, N × entries further new pairs, measured again (default 2; 0: none)
//	-min-total N     measure ceil(N / size) caches together at sizes below N (default 100000; 0: one)
//	-md FILE, -json FILE, -chart-dir DIR, -from-json FILE, -note TEXT
package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/cli"
	"github.com/cachekit/cachekit/bench/internal/footprint"
	"github.com/cachekit/cachekit/bench/internal/report"
)

func main() {
	if cli.Child("memory", footprint.RunJob) {
		return
	}
	cli.Main("memory", run)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("memory", stderr)
	caches := fs.String("caches", "", "caches (default: "+strings.Join(footprint.DefaultCaches, ",")+")")
	sizes := fs.String("sizes", "1000,10000,100000,1000000", "entry counts")
	ttl := fs.Duration("ttl", time.Hour, "every entry's time to live")
	rounds := fs.Int("rounds", 3, "rounds")
	churn := fs.Int("churn", 2, "after the fill, set this many times N further pairs and measure again (bounded caches of Go values; 0: no churn)")
	minTotal := fs.Int("min-total", 100_000, "at sizes below this, build ceil(min-total / size) caches in the process and measure them together (0: one cache per process)")
	var out cli.Output
	out.Flags(fs, false)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	var rep footprint.Report
	err := out.Load(&rep, func() error {
		infos, err := adapter.SelectStrings(*caches, footprint.DefaultCaches)
		if err != nil {
			return err
		}
		ss, err := cli.Ints(*sizes, cli.Positive)
		var bad *cli.IntError
		if errors.As(err, &bad) {
			return fmt.Errorf("-sizes: bad size %q: %v", bad.Field, bad.Err)
		}
		if *rounds < 1 || *ttl < 0 || *churn < 0 || *minTotal < 0 {
			return fmt.Errorf("-rounds must be positive, -ttl, -churn and -min-total not negative")
		}
		start := time.Now()
		rep = footprint.Report{Header: out.Header("./bench/cmd/memory", args), Sizes: ss, TTL: report.ShortDuration(*ttl), Rounds: *rounds, Churn: *churn, MinTotal: *minTotal}
		rep.Method = method(*rounds)
		var names []string
		for _, i := range infos {
			names = append(names, i.Name)
			rep.Caches = append(rep.Caches, i.Name)
			rep.Configs = append(rep.Configs, i.Config)
		}
		rep.Results, err = footprint.Measure(footprint.Config{Caches: names, Sizes: ss, TTL: *ttl, Rounds: *rounds, Churn: *churn, MinTotal: *minTotal, Progress: stderr})
		if err != nil {
			return err
		}
		rep.Finish(start)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.HeapTable())
	fmt.Fprint(stdout, rep.ChurnTable())
	fmt.Fprint(stdout, rep.RSSTable())
	return out.Write(&rep, cli.OneChart(rep.Chart), func(charts []string) string { return rep.Markdown(charts[0]) })
}

// method is the header's line on how the figures were taken.
func method(rounds int) string {
	return report.Count(rounds, "round") + "; every cache and size in a fresh process; medians"
}
