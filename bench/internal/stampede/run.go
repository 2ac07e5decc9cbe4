// Package stampede measures the stampede scenario of the [loading] issue:
// many goroutines, released together, ask a read-through cache for one key
// whose loader is slow, on a cold key and on an expired hot key. It counts
// the loader calls and measures every caller's latency, for cachekit's
// loading package and its peers (x/sync singleflight over a mutex map,
// otter v2's loader, sturdyc). cmd/stampede writes the report.
package stampede

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Case is a scenario.
type Case string

const (
	// Cold: the key has never been loaded.
	Cold Case = "cold"
	// Hot: the key was loaded, and the clock has moved past its refresh
	// age (or its TTL); see Factory.HotAge.
	Hot Case = "hot"
)

// Cases lists the scenarios in report order.
var Cases = []Case{Cold, Hot}

// Title returns the case's heading.
func (c Case) Title() string {
	switch c {
	case Cold:
		return "Cold key"
	case Hot:
		return "Expired hot key"
	}
	return string(c)
}

// Key is the one key every caller asks for; Value is what the loader
// returns for it.
const (
	Key   = "stampede"
	Value = 42
)

// Params are the parameters of a round.
type Params struct {
	Callers  int           // goroutines released together
	LoadTime time.Duration // how long the loader sleeps
	// Settle is how long after the last caller returned the harness keeps
	// counting loader calls (a background reload may start late); it then
	// also waits for loads in flight. Default 20ms.
	Settle time.Duration
}

// Round is the result of one round of one cache in one case.
type Round struct {
	Calls int64 // loader calls during the round (after the warm-up)
	// Latencies of the callers, sorted: from each caller's own release
	// from the start barrier to the return of its Get.
	Latencies []time.Duration
	// FromRelease: from the barrier's opening (one instant for all) to the
	// return of each Get, sorted: includes the time the scheduler takes to
	// wake the callers.
	FromRelease []time.Duration
	LoadTime    time.Duration // the loader's own mean measured latency, 0 without a call
	Errors      int           // callers that got an error or a wrong value
	FirstError  error
}

// Percentile returns the p-quantile (0 ≤ p ≤ 1) of sorted ds, nearest rank below.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[int(p*float64(len(ds)-1))]
}

// counter is the harness's loader: it counts its calls and the loads in
// flight, and measures its own latency.
type counter struct {
	calls, inflight, nanos atomic.Int64
	load                   func(ctx context.Context) // the source's work
}

func (c *counter) Load(ctx context.Context, key string) (int, error) {
	c.calls.Add(1)
	c.inflight.Add(1)
	defer c.inflight.Add(-1)
	t0 := time.Now()
	c.load(ctx)
	c.nanos.Add(int64(time.Since(t0)))
	return Value, nil
}

// waitIdle waits for settle, then for the loads in flight to end.
func (c *counter) waitIdle(settle time.Duration) error {
	time.Sleep(settle)
	deadline := time.Now().Add(30 * time.Second)
	for c.inflight.Load() > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("a load is still running after 30s")
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// Sleep returns a loader body that sleeps for d (the source's latency).
func Sleep(d time.Duration) func(context.Context) {
	return func(context.Context) { time.Sleep(d) }
}

// RunRound runs one round: a fresh cache, in the hot case a warm-up load
// and a clock moved by f.HotAge, then p.Callers goroutines released
// together, each calling Get once. work is the loader's body (Sleep of
// p.LoadTime in the benchmark).
func RunRound(f Factory, c Case, p Params, work func(context.Context)) (Round, error) {
	if p.Callers < 1 {
		return Round{}, fmt.Errorf("callers must be at least 1")
	}
	settle := p.Settle
	if settle <= 0 {
		settle = 20 * time.Millisecond
	}
	clock := NewClock()
	cnt := &counter{load: work}
	cache := f.New(clock, cnt.Load)
	defer cache.Close()
	ctx := context.Background()

	if c == Hot {
		v, err := cache.Get(ctx, Key)
		if err != nil {
			return Round{}, fmt.Errorf("%s: warm-up: %w", f.Name, err)
		}
		if v != Value {
			return Round{}, fmt.Errorf("%s: warm-up: got %d, want %d", f.Name, v, Value)
		}
		if err := cnt.waitIdle(0); err != nil {
			return Round{}, err
		}
		cnt.calls.Store(0)
		cnt.nanos.Store(0)
		clock.Advance(f.HotAge)
	} else if c != Cold {
		return Round{}, fmt.Errorf("unknown case %q", c)
	}

	lat := make([]time.Duration, p.Callers)
	rel := make([]time.Duration, p.Callers)
	errs := make([]error, p.Callers)
	start := make(chan struct{})
	var release time.Time
	var ready, done sync.WaitGroup
	for i := range p.Callers {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-start
			t0 := time.Now()
			v, err := cache.Get(ctx, Key)
			end := time.Now()
			lat[i], rel[i] = end.Sub(t0), end.Sub(release)
			if err == nil && v != Value {
				err = fmt.Errorf("got %d, want %d", v, Value)
			}
			errs[i] = err
		})
	}
	ready.Wait()
	release = time.Now()
	close(start)
	done.Wait()
	if err := cnt.waitIdle(settle); err != nil {
		return Round{}, err
	}

	r := Round{Calls: cnt.calls.Load(), Latencies: lat, FromRelease: rel}
	if r.Calls > 0 {
		r.LoadTime = time.Duration(cnt.nanos.Load() / r.Calls)
	}
	for _, err := range errs {
		if err != nil {
			r.Errors++
			if r.FirstError == nil {
				r.FirstError = err
			}
		}
	}
	slices.Sort(r.Latencies)
	slices.Sort(r.FromRelease)
	return r, nil
}

// Row is the summary of one cache in one case over the rounds.
type Row struct {
	Cache     string
	Refreshes bool
	Rounds    int
	// Loader calls per round: median (the mean of the middle two over an
	// even number of rounds, so not always whole), least, most, and over
	// all rounds.
	Calls                          float64
	MinCalls, MaxCalls, TotalCalls int64
	// Medians over the rounds of each round's latency percentiles.
	P50, P99, Max  time.Duration
	P99FromRelease time.Duration
	LoadTime       time.Duration // median of the rounds' measured loader latency (rounds with a call)
	Errors         int           // callers with an error, over all rounds
	FirstError     string
}

// Summarize turns rounds of one cache in one case into a Row.
func Summarize(cache string, refreshes bool, rounds []Round) Row {
	row := Row{Cache: cache, Refreshes: refreshes, Rounds: len(rounds)}
	var calls []int64
	var callsF []float64 // calls, for a median that is not truncated
	var p50, p99, mx, p99r, load []time.Duration
	for _, r := range rounds {
		calls = append(calls, r.Calls)
		callsF = append(callsF, float64(r.Calls))
		row.TotalCalls += r.Calls
		p50 = append(p50, Percentile(r.Latencies, 0.50))
		p99 = append(p99, Percentile(r.Latencies, 0.99))
		mx = append(mx, Percentile(r.Latencies, 1))
		p99r = append(p99r, Percentile(r.FromRelease, 0.99))
		if r.Calls > 0 {
			load = append(load, r.LoadTime)
		}
		row.Errors += r.Errors
		if row.FirstError == "" && r.FirstError != nil {
			row.FirstError = r.FirstError.Error()
		}
	}
	if len(calls) > 0 {
		row.Calls = Median(callsF)
		row.MinCalls, row.MaxCalls = slices.Min(calls), slices.Max(calls)
	}
	row.P50, row.P99, row.Max, row.P99FromRelease = Median(p50), Median(p99), Median(mx), Median(p99r)
	row.LoadTime = Median(load)
	return row
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none. For integer types the mean is truncated: use
// float64 where the median is shown as a number (the loader calls).
func Median[T int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Config is a whole measurement.
type Config struct {
	Caches []Factory
	Cases  []Case
	Rounds int
	Params Params
	Work   func(context.Context) // the loader's body; nil: Sleep(Params.LoadTime)
	// Progress, if not nil, receives a line per round.
	Progress io.Writer
}

// Result is one case's rows, one per cache.
type Result struct {
	Case Case
	Rows []Row
}

// Measure runs every cache in every case Rounds times, interleaved (round
// 1: every case and cache, round 2: ...), and summarizes the rounds.
func Measure(cfg Config) ([]Result, error) {
	if cfg.Rounds < 1 {
		return nil, fmt.Errorf("rounds must be at least 1")
	}
	if len(cfg.Caches) == 0 || len(cfg.Cases) == 0 {
		return nil, fmt.Errorf("nothing to run")
	}
	work := cfg.Work
	if work == nil {
		work = Sleep(cfg.Params.LoadTime)
	}
	rounds := make(map[Case][][]Round) // case → cache index → rounds
	for _, c := range cfg.Cases {
		rounds[c] = make([][]Round, len(cfg.Caches))
	}
	for i := range cfg.Rounds {
		for _, c := range cfg.Cases {
			for j, f := range cfg.Caches {
				r, err := RunRound(f, c, cfg.Params, work)
				if err != nil {
					return nil, err
				}
				rounds[c][j] = append(rounds[c][j], r)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "round %d/%d %-5s %-15s calls=%-4d p50=%-10v p99=%-10v max=%v errors=%d\n",
						i+1, cfg.Rounds, c, f.Name, r.Calls, Percentile(r.Latencies, 0.5).Round(time.Microsecond),
						Percentile(r.Latencies, 0.99).Round(time.Microsecond), Percentile(r.Latencies, 1).Round(time.Microsecond), r.Errors)
				}
			}
		}
	}
	var out []Result
	for _, c := range cfg.Cases {
		res := Result{Case: c}
		for j, f := range cfg.Caches {
			res.Rows = append(res.Rows, Summarize(f.Name, f.Refreshes, rounds[c][j]))
		}
		out = append(out, res)
	}
	return out, nil
}
