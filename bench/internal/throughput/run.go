// Package throughput measures how many operations per second caches serve
// under the workloads of package workload, interleaving the caches over
// rounds, and reports the medians as Markdown tables and JSON.
package throughput

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

// Sample is the outcome of one timed run of one cache.
type Sample struct {
	Ops     uint64
	Gets    uint64
	Hits    uint64
	Elapsed time.Duration
	// Goroutines is the number of goroutines that ran, and MinOps the
	// fewest operations one of them completed.
	Goroutines int
	MinOps     uint64
}

// OpsPerSec returns the run's throughput.
func (s Sample) OpsPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// SlowestShare returns the operations of the goroutine that did fewest
// as a share of the mean per goroutine (1: every goroutine did as many),
// and false if nothing ran.
func (s Sample) SlowestShare() (float64, bool) {
	if s.Ops == 0 || s.Goroutines == 0 {
		return 0, false
	}
	return float64(s.MinOps) * float64(s.Goroutines) / float64(s.Ops), true
}

// HitRatio returns the share of Gets that hit, and false if there were no
// Gets.
func (s Sample) HitRatio() (float64, bool) {
	if s.Gets == 0 {
		return 0, false
	}
	return float64(s.Hits) / float64(s.Gets), true
}

// batch is how many operations a goroutine performs between two looks at
// the stop flag.
const batch = 512

// Run builds a fresh cache from info, pre-fills it for w, and has
// goroutines workers run w at the given read share for about d, all
// starting together. It returns the operations done and the time from the
// start until the last goroutine stopped. The operation streams are drawn
// from seed, and generated (like the cache's pre-fill) before timing.
func Run(info adapter.Info, w *workload.Workload, readPct, goroutines int, d time.Duration, seed uint64) Sample {
	c := info.New(w.Capacity)
	defer c.Close()
	w.Prefill(c)
	workers := w.Workers(readPct, goroutines, seed)
	// Leave the garbage of earlier runs behind, so this run does not pay
	// for collecting it.
	runtime.GC()

	var (
		stop  atomic.Bool
		ready sync.WaitGroup
		done  sync.WaitGroup
		start = make(chan struct{})
	)
	for _, wk := range workers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			for !stop.Load() {
				wk.Run(c, batch)
			}
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	time.Sleep(d)
	stop.Store(true)
	done.Wait()
	elapsed := time.Since(t0)

	s := Sample{Elapsed: elapsed, Goroutines: len(workers), MinOps: math.MaxUint64}
	for _, wk := range workers {
		s.Ops += wk.Ops
		s.Gets += wk.Gets
		s.Hits += wk.Hits
		s.MinOps = min(s.MinOps, wk.Ops)
	}
	return s
}

// Config is a set of measurements to make.
type Config struct {
	Caches    []adapter.Info
	Workloads []*workload.Workload
	// Mults are the goroutine counts as multiples of GOMAXPROCS.
	Mults    []int
	Rounds   int
	Duration time.Duration
	// Seed is the seed of round 1's operation streams; round r uses
	// Seed+r-1. Within a round every cache gets the same streams.
	Seed uint64
	// Progress, if not nil, receives a line per run.
	Progress io.Writer
}

// Cell identifies one measurement: a workload at a read share with a
// number of goroutines.
type Cell struct {
	Workload   string
	ReadPct    int
	Goroutines int
}

// Measurement is a cache's samples in a cell, one per round.
type Measurement struct {
	Cell
	Cache   string
	Samples []Sample
}

// Measure runs every cache in every cell, round after round: each round
// runs each cell once for every cache, in the order of roundOrder, so that
// no cache always runs first (on a fresh machine) or, with three caches or
// more and two rounds or more, right after the same neighbour. Every run
// uses a fresh cache.
func Measure(cfg Config) ([]Measurement, error) {
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("throughput: rounds must be at least 1, got %d", cfg.Rounds)
	}
	if len(cfg.Caches) == 0 || len(cfg.Workloads) == 0 || len(cfg.Mults) == 0 {
		return nil, fmt.Errorf("throughput: nothing to measure")
	}
	for _, m := range cfg.Mults {
		if m < 1 {
			return nil, fmt.Errorf("throughput: goroutine multiple %d is not positive", m)
		}
	}
	procs := runtime.GOMAXPROCS(0)
	var out []Measurement
	index := map[string]int{} // cell and cache → position in out
	key := func(c Cell, cache string) string {
		return fmt.Sprintf("%s/%d/%d/%s", c.Workload, c.ReadPct, c.Goroutines, cache)
	}
	for _, w := range cfg.Workloads {
		for _, pct := range w.ReadPcts {
			for _, m := range cfg.Mults {
				for _, info := range cfg.Caches {
					cell := Cell{Workload: w.Name, ReadPct: pct, Goroutines: m * procs}
					index[key(cell, info.Name)] = len(out)
					out = append(out, Measurement{Cell: cell, Cache: info.Name})
				}
			}
		}
	}
	for round := range cfg.Rounds {
		order := roundOrder(cfg.Caches, round)
		seed := cfg.Seed + uint64(round)
		for _, w := range cfg.Workloads {
			for _, pct := range w.ReadPcts {
				for _, m := range cfg.Mults {
					cell := Cell{Workload: w.Name, ReadPct: pct, Goroutines: m * procs}
					for _, info := range order {
						s := Run(info, w, pct, cell.Goroutines, cfg.Duration, seed)
						i := index[key(cell, info.Name)]
						out[i].Samples = append(out[i].Samples, s)
						if cfg.Progress != nil {
							fmt.Fprintf(cfg.Progress, "round %d/%d  %-13s %3d%% reads  %3d goroutines  %-12s %8.2f M ops/s\n",
								round+1, cfg.Rounds, w.Name, pct, cell.Goroutines, info.Name, s.OpsPerSec()/1e6)
						}
					}
				}
			}
		}
	}
	return out, nil
}

// roundOrder returns the order the caches run in, in each cell of round
// (counted from 0): from the round-th cache (modulo their number), forward
// through the list in even rounds and backward in odd ones. The first
// cache moves on by one each round, and a cache that does not run first
// runs right after its predecessor in the list (taken as a ring) in even
// rounds and after its successor in odd rounds, two different caches when
// there are three or more: a rotation alone would keep every cache behind
// the same neighbour in every round.
func roundOrder(caches []adapter.Info, round int) []adapter.Info {
	n := len(caches)
	step := 1
	if round%2 == 1 {
		step = n - 1
	}
	out := make([]adapter.Info, 0, n)
	for i, j := 0, round%n; i < n; i, j = i+1, (j+step)%n {
		out = append(out, caches[j])
	}
	return out
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs must not be empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
