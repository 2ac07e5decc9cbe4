package articles

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/memstat"
	"github.com/cachekit/cachekit/bench/internal/subproc"
)

// DefaultCaches are the caches of the table, in its order: cachekit, the
// bounded caches, the maps, the byte caches.
var DefaultCaches = []string{"cachekit", "otter", "theine", "ristretto", "lru", "go-cache",
	"sync.Map", "xsync", "mutex-map", "rwmutex-map", "sharded-map",
	"bigcache", "freecache", "fastcache", "bytecache"}

// WritePcts are the article's write shares, in percent.
var WritePcts = []float64{10, 0.1}

// Job is one cache's measurement in a fresh process.
type Job struct {
	Cache      string        `json:"cache"`
	Entries    int           `json:"entries"`
	Goroutines int           `json:"goroutines"`
	Duration   time.Duration `json:"duration"`
	WritePcts  []float64     `json:"write_pcts"`
	Seed       uint64        `json:"seed"`
}

// Result is what a Job measured.
type Result struct {
	Cache string `json:"cache"`
	// Held is the number of the filled keys a Get found after the fill.
	Held int `json:"held"`
	// Memory is what the process held after the fill, minus what it
	// held before the cache was built, both after a forced GC.
	Memory memstat.Delta `json:"memory"`
	// Fill is the time the fill took (one goroutine).
	Fill   time.Duration `json:"fill"`
	Phases []Phase       `json:"phases"`
}

// Phase is a timed run at one write share.
type Phase struct {
	WritePct float64       `json:"write_pct"`
	Ops      uint64        `json:"ops"`
	Gets     uint64        `json:"gets"`
	Hits     uint64        `json:"hits"`
	Elapsed  time.Duration `json:"elapsed"`
}

// NsPerOp returns the wall-clock time per operation, summed over the
// goroutines, as `go test` reports for b.RunParallel.
func (p Phase) NsPerOp() float64 {
	if p.Ops == 0 {
		return 0
	}
	return float64(p.Elapsed.Nanoseconds()) / float64(p.Ops)
}

// syncEvery is how often the fill waits for asynchronous caches, so that
// their buffers never overflow and drop part of the fill.
const syncEvery = 1024

// Fill stores keys [0, n) with their values in c, one goroutine, and
// waits for asynchronous caches to apply them.
func Fill(c adapter.StringCache[Value], n int) {
	for i := range n {
		c.Set(Key(i), NewValue(i))
		if i%syncEvery == syncEvery-1 {
			adapter.Settle(c)
		}
	}
	adapter.Settle(c)
}

// New builds the named cache for n entries of the table.
func New(name string, n int) (adapter.StringCache[Value], error) {
	// The byte caches are sized for the largest entry.
	return adapter.NewString(name, adapter.StringConfig[Value]{Capacity: n, Codec: Codec{}, EntryBytes: EntryBytes(n - 1)})
}

// Keys returns keys [0, n), and some values to write: the strings are
// built after the memory measurement, so they are not charged to a
// cache.
func Keys(n int) ([]string, []Value) {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = Key(i)
	}
	vals := make([]Value, 1024)
	for i := range vals {
		vals[i] = NewValue(i)
	}
	return keys, vals
}

// RunJob does a Job in this process.
func RunJob(j Job) (Result, error) {
	if j.Entries < 1 || j.Goroutines < 1 || j.Duration <= 0 {
		return Result{}, fmt.Errorf("articles: bad job %+v", j)
	}
	base := memstat.Take()
	c, err := New(j.Cache, j.Entries)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	t0 := time.Now()
	Fill(c, j.Entries)
	res := Result{Cache: j.Cache, Fill: time.Since(t0)}
	res.Memory = memstat.Take().Sub(base)

	keys, vals := Keys(j.Entries)
	for _, k := range keys {
		if _, ok := c.Get(k); ok {
			res.Held++
		}
	}
	for _, pct := range j.WritePcts {
		streams := make([]*Stream, j.Goroutines)
		for g := range streams {
			streams[g] = NewStream(j.Entries, pct, j.Seed, g)
		}
		runtime.GC()
		elapsed := Timed(streams, c, keys, vals, j.Duration)
		p := Phase{WritePct: pct, Elapsed: elapsed}
		for _, s := range streams {
			p.Ops += s.Ops
			p.Gets += s.Gets
			p.Hits += s.Hits
		}
		res.Phases = append(res.Phases, p)
	}
	return res, nil
}

// Config is a whole run: every cache, round after round, each in a fresh
// process.
type Config struct {
	Caches     []string
	Entries    int
	Goroutines int
	Duration   time.Duration
	Rounds     int
	Seed       uint64
	// WritePcts are the write shares of the timed runs; nil means
	// WritePcts.
	WritePcts []float64
	// Args are the arguments the child processes get (the test binary
	// needs flags that keep it from running the tests).
	Args     []string
	Progress io.Writer
}

// Measure runs every cache once per round, each time in a fresh process;
// the order of the caches rotates by one each round. It returns each
// cache's results, one per round, in Caches order.
func Measure(cfg Config) (map[string][]Result, error) {
	if cfg.Rounds < 1 || len(cfg.Caches) == 0 {
		return nil, fmt.Errorf("articles: nothing to measure")
	}
	pcts := cfg.WritePcts
	if pcts == nil {
		pcts = WritePcts
	}
	out := map[string][]Result{}
	n := len(cfg.Caches)
	for round := range cfg.Rounds {
		order := slices.Concat(cfg.Caches[round%n:], cfg.Caches[:round%n])
		for _, name := range order {
			j := Job{Cache: name, Entries: cfg.Entries, Goroutines: cfg.Goroutines, Duration: cfg.Duration,
				WritePcts: pcts, Seed: cfg.Seed + uint64(round)}
			var r Result
			if err := subproc.Run(j, &r, cfg.Args, cfg.Progress); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[name] = append(out[name], r)
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "round %d/%d  %-12s held %8d  heap %7.1f MiB  rss %7.1f MiB", round+1, cfg.Rounds, name,
					r.Held, mib(r.Memory.HeapInuse), mib(r.Memory.RSS))
				for _, p := range r.Phases {
					fmt.Fprintf(cfg.Progress, "  %g%% writes %6.1f ns/op", p.WritePct, p.NsPerOp())
				}
				fmt.Fprintln(cfg.Progress)
			}
		}
	}
	return out, nil
}

// mib converts bytes to MiB (2^20 bytes), the unit of the reports' memory columns.
func mib(b int64) float64 { return float64(b) / (1 << 20) }
