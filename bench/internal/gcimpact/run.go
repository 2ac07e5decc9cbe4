package gcimpact

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cachekit/cachekit/bench/internal/subproc"
)

// DefaultCaches are the caches of gc.md: cachekit, the peers, the maps
// (a plain map among them) and the byte caches.
var DefaultCaches = []string{"cachekit", "otter", "theine", "ristretto", "lru", "go-cache",
	"sync.Map", "xsync", "mutex-map", "rwmutex-map", "sharded-map", "map",
	"bigcache", "freecache", "fastcache", "bytecache"}

// Config is a whole run.
type Config struct {
	Caches []string
	// Sizes are the entry counts; 0 means a cache built for the largest
	// size and left empty. The baseline without a cache (None) is
	// measured once per round when Sizes holds 0.
	Sizes    []int
	Template Job // everything but Cache, Capacity and Entries
	Rounds   int
	Args     []string // the child processes' arguments
	Progress io.Writer
}

// Jobs returns the run's jobs for one round, in order: by size, then by
// cache (rotated by round), the baseline first at size 0.
func (cfg Config) Jobs(round int) []Job {
	largest := slices.Max(cfg.Sizes)
	n := len(cfg.Caches)
	order := slices.Concat(cfg.Caches[round%n:], cfg.Caches[:round%n])
	var out []Job
	for _, size := range cfg.Sizes {
		names := order
		if size == 0 {
			names = append([]string{None}, order...)
		}
		for _, name := range names {
			j := cfg.Template
			j.Cache, j.Entries, j.Capacity = name, size, size
			if size == 0 {
				j.Capacity = max(largest, 1)
			}
			j.Seed += uint64(round)
			out = append(out, j)
		}
	}
	return out
}

// Measure runs every job of every round in a fresh process.
func Measure(cfg Config) ([]Result, error) {
	if cfg.Rounds < 1 || len(cfg.Caches) == 0 || len(cfg.Sizes) == 0 {
		return nil, fmt.Errorf("gcimpact: nothing to measure")
	}
	var out []Result
	for round := range cfg.Rounds {
		for _, j := range cfg.Jobs(round) {
			var r Result
			t0 := time.Now()
			if err := subproc.Run(j, &r, cfg.Args, cfg.Progress); err != nil {
				return nil, fmt.Errorf("%s with %d entries: %w", j.Cache, j.Entries, err)
			}
			out = append(out, r)
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "round %d/%d  %-12s %9d entries  heap %7.0f MiB  rss %7.0f MiB  forced GC %8.2f ms  "+
					"churn %5.1fs %3d cycles GC CPU %.3f s/s  p99.9 %8.1f µs  (%s)\n",
					round+1, cfg.Rounds, j.Cache, j.Entries, float64(r.Memory.HeapInuse)/(1<<20), float64(r.Memory.RSS)/(1<<20),
					ms(r.ForcedMin()), r.Window.Seconds(), r.Cycles, r.GCCPUPerSecond(), us(r.P999), time.Since(t0).Round(time.Second))
			}
		}
	}
	return out, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
