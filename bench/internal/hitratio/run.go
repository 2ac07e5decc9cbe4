// Package hitratio replays the traces of ../shared/traces through
// cachekit's policies, the real cachekit.Cache, the peer caches and
// Bélády's optimum, and reports the hit ratios as Markdown (with one chart
// per trace) and JSON. The command bench/cmd/hitratio drives it.
//
// Every replay is single-threaded: Get each key of the trace, Set it on a
// miss, every entry of weight 1. Caches that seed themselves at random (or
// run maintenance concurrently) are replayed several times and their mean
// reported.
package hitratio

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cachekit/cachekit/sim"
)

// Config configures Run.
type Config struct {
	TracesDir string                              // where the trace files are
	Traces    []TraceSpec                         // the traces and capacities to replay
	Caches    []Contender                         // the caches to replay them through
	Runs      int                                 // replays of each Random cache (at least 1)
	Parallel  int                                 // replays at a time; 0 means GOMAXPROCS
	Progress  io.Writer                           // a line per finished replay, if not nil
	Load      func(path string) ([]uint64, error) // reads a trace; nil means sim.Load
	// Isolate replays the caches with goroutines of their own (Background)
	// one at a time, after the others, so that nothing competes with
	// their goroutines for the processors.
	Isolate bool
}

// Result is the outcome of the replays of one cache at one (trace,
// capacity) point.
type Result struct {
	Trace    string
	Capacity int
	Cache    string
	Kind     Kind
	Requests uint64
	Hits     []uint64 // one per run
	// ReadsKept and ReadsDropped count, over the runs, the Gets that a
	// cache with lossy read buffers recorded for its policy and those it
	// dropped (both 0 for other caches).
	ReadsKept, ReadsDropped uint64
}

// HitRatio returns the mean hit ratio of the runs, in 0..1.
func (r *Result) HitRatio() float64 {
	if r == nil || r.Requests == 0 || len(r.Hits) == 0 {
		return 0
	}
	var sum float64
	for _, h := range r.Hits {
		sum += float64(h)
	}
	return sum / float64(len(r.Hits)) / float64(r.Requests)
}

// Spread returns the lowest and the highest hit ratio of the runs.
func (r *Result) Spread() (lo, hi float64) {
	if r.Requests == 0 || len(r.Hits) == 0 {
		return 0, 0
	}
	return float64(slices.Min(r.Hits)) / float64(r.Requests), float64(slices.Max(r.Hits)) / float64(r.Requests)
}

// TraceInfo is a replayed trace with its measured size.
type TraceInfo struct {
	TraceSpec
	Requests int
	Unique   int
}

// Results holds everything a run measured.
type Results struct {
	Traces  []TraceInfo
	Caches  []Contender
	Runs    int
	Results []*Result
	Elapsed time.Duration

	index map[pointKey]*Result
}

type pointKey struct {
	trace    string
	capacity int
	cache    string
}

// Get returns the result of cache at (trace, capacity), or nil.
func (rs *Results) Get(trace string, capacity int, cache string) *Result {
	if rs.index == nil {
		rs.index = make(map[pointKey]*Result, len(rs.Results))
		for _, r := range rs.Results {
			rs.index[pointKey{r.Trace, r.Capacity, r.Cache}] = r
		}
	}
	return rs.index[pointKey{trace, capacity, cache}]
}

// Ratio returns the mean hit ratio of cache at (trace, capacity) in
// percent, and whether it was measured.
func (rs *Results) Ratio(trace string, capacity int, cache string) (float64, bool) {
	r := rs.Get(trace, capacity, cache)
	if r == nil {
		return 0, false
	}
	return 100 * r.HitRatio(), true
}

// job is one replay.
type job struct {
	trace *sim.Trace
	info  *TraceInfo
	cap   int
	cache *Contender
	res   *Result
	run   int
}

// Run loads the traces and replays each through each cache at each of its
// capacities, cfg.Parallel replays at a time.
func Run(cfg Config) (*Results, error) {
	start := time.Now()
	if cfg.Runs < 1 {
		cfg.Runs = 1
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.GOMAXPROCS(0)
	}
	load := cfg.Load
	if load == nil {
		load = func(path string) ([]uint64, error) { return sim.Load(path) }
	}
	rs := &Results{Caches: cfg.Caches, Runs: cfg.Runs}
	var jobs []job
	for _, spec := range cfg.Traces {
		keys, err := load(filepath.Join(cfg.TracesDir, spec.File()))
		if err != nil {
			return nil, fmt.Errorf("trace %s: %w", spec.Name, err)
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("trace %s: no requests", spec.Name)
		}
		info := &TraceInfo{TraceSpec: spec, Requests: len(keys), Unique: countUnique(keys)}
		rs.Traces = append(rs.Traces, *info)
		t := sim.NewTrace(keys)
		for _, capacity := range spec.Capacities {
			for i := range cfg.Caches {
				c := &cfg.Caches[i]
				res := &Result{Trace: spec.Name, Capacity: capacity, Cache: c.Name, Kind: c.Kind, Requests: uint64(len(keys))}
				rs.Results = append(rs.Results, res)
				runs := 1
				if c.Random {
					runs = cfg.Runs
				}
				res.Hits = make([]uint64, runs)
				for run := range runs {
					jobs = append(jobs, job{trace: t, info: info, cap: capacity, cache: c, res: res, run: run})
				}
			}
		}
	}
	// The longest replays first, so that the last ones to finish are
	// short; the peers that wait on every Set are the slowest per request.
	slices.SortStableFunc(jobs, func(a, b job) int {
		return cmp.Compare(cost(b), cost(a))
	})

	var parallel, isolated []job
	for _, j := range jobs {
		if cfg.Isolate && j.cache.Background {
			isolated = append(isolated, j)
		} else {
			parallel = append(parallel, j)
		}
	}
	var (
		mu   sync.Mutex
		done int
		errs []error
	)
	work := func(j job) {
		t0 := time.Now()
		r, kept, dropped, err := replay(j)
		mu.Lock()
		defer mu.Unlock()
		done++
		if err != nil {
			errs = append(errs, fmt.Errorf("%s @%d, %s: %w", j.info.Name, j.cap, j.cache.Name, err))
			return
		}
		j.res.Hits[j.run] = r.Hits
		j.res.ReadsKept += kept
		j.res.ReadsDropped += dropped
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "[%d/%d] %s @%d %s run %d: %.2f%% (%.1fs)\n", done, len(jobs),
				j.info.Name, j.cap, j.cache.Name, j.run+1, 100*r.HitRatio(), time.Since(t0).Seconds())
		}
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(errs) > 0
	}
	runAll(parallel, cfg.Parallel, work, failed)
	runAll(isolated, 1, work, failed)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rs.Elapsed = time.Since(start)
	return rs, nil
}

// cost estimates a job's duration, for ordering.
func cost(j job) float64 {
	f := 1.0
	switch j.cache.Name {
	case "theine", "ristretto":
		f = 4 // a channel round trip per Set
	case NameCache, "otter":
		f = 2
	}
	return f * float64(j.info.Requests)
}

// runAll runs the jobs on n goroutines, and stops handing them out once
// failed reports true.
func runAll(jobs []job, n int, work func(job), failed func() bool) {
	queue := make(chan job)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for j := range queue {
				work(j)
			}
		})
	}
	for _, j := range jobs {
		if failed() {
			break
		}
		queue <- j
	}
	close(queue)
	wg.Wait()
}

func replay(j job) (r sim.Result, kept, dropped uint64, err error) {
	c, err := j.cache.New(j.trace, j.cap)
	if err != nil {
		return sim.Result{}, 0, 0, err
	}
	if cl, ok := c.(io.Closer); ok {
		defer cl.Close()
	}
	r = sim.Replay(c, j.trace.Keys())
	if rr, ok := c.(ReadRecorder); ok {
		kept, dropped, _ = rr.ReadRecords()
	}
	return r, kept, dropped, nil
}

func countUnique(keys []uint64) int {
	seen := make(map[uint64]struct{}, len(keys)/4)
	for _, k := range keys {
		seen[k] = struct{}{}
	}
	return len(seen)
}
