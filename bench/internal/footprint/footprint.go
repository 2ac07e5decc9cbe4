// Package footprint measures the memory a cache takes per entry at 1k,
// 10k, 100k and 1M entries with a TTL set, as otter's memory benchmark
// does: keys and values are pre-generated 16-byte strings, kept alive by
// the benchmark, so what a cache adds is its own structure (and the 32
// bytes of the key and value themselves: two string headers for a cache
// of Go values, a copy of the 32 bytes for a byte cache).
//
// Each measurement runs in a fresh process (package subproc).
package footprint

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

// PairBytes is the size of a key plus its value: two 16-byte strings.
const PairBytes = 32

// DefaultCaches are the caches of memory.md.
var DefaultCaches = []string{"cachekit", "otter", "theine", "ristretto", "map", "bigcache", "freecache", "fastcache", "bytecache"}

// DefaultSizes are the entry counts of memory.md.
var DefaultSizes = []int{1_000, 10_000, 100_000, 1_000_000}

// Job is one measurement.
type Job struct {
	Cache   string        `json:"cache"`
	Entries int           `json:"entries"`
	TTL     time.Duration `json:"ttl"`
	// Churn, if not 0, is the number of further rounds of Entries new
	// keys set after the fill (see RunJob).
	Churn int `json:"churn,omitempty"`
}

// Result is what a Job measured.
type Result struct {
	Cache   string        `json:"cache"`
	Entries int           `json:"entries"`
	Churn   int           `json:"churn,omitempty"`
	Held    int           `json:"held"`
	Memory  memstat.Delta `json:"memory"`
}

// HeapPerEntry returns the growth of the heap in use per entry.
func (r Result) HeapPerEntry() float64 {
	return float64(r.Memory.HeapInuse) / float64(max(r.Entries, 1))
}

// RSSPerEntry returns the growth of the resident set per entry.
func (r Result) RSSPerEntry() float64 { return float64(r.Memory.RSS) / float64(max(r.Entries, 1)) }

// Pairs returns n keys and n values: 16-byte strings.
func Pairs(n int) (keys, vals []string) {
	keys = make([]string, n)
	vals = make([]string, n)
	for i := range n {
		keys[i] = fmt.Sprintf("key-%012d", i)
		vals[i] = fmt.Sprintf("val-%012d", i)
	}
	return keys, vals
}

// RunJob does a Job in this process: it fills a cache of capacity
// j.Entries with as many pairs and measures the memory it took. With
// j.Churn, it then sets j.Churn × j.Entries further pairs, none set
// before, each followed by a Get of its key (so that a cache with a
// frequency-based admission takes it in, as it would a key that is
// requested again), and measures after that instead: the steady state of
// a full cache whose contents keep changing, where freed entries leave
// holes in the heap. Every pair exists before the first measurement, so
// neither figure counts their bytes.
func RunJob(j Job) (Result, error) {
	if j.Entries < 1 || j.TTL < 0 || j.Churn < 0 {
		return Result{}, fmt.Errorf("footprint: bad job %+v", j)
	}
	keys, vals := Pairs(j.Entries * (1 + j.Churn))
	base := memstat.Take()
	c, err := adapter.NewString(j.Cache, adapter.StringConfig[string]{Capacity: j.Entries, TTL: j.TTL,
		Codec: adapter.StringCodec{}, EntryBytes: PairBytes})
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	for i, k := range keys {
		c.Set(k, vals[i])
		if i >= j.Entries {
			c.Get(k)
		}
		if i%1024 == 1023 {
			adapter.Settle(c)
		}
	}
	adapter.Settle(c)
	res := Result{Cache: j.Cache, Entries: j.Entries, Churn: j.Churn}
	res.Memory = memstat.Take().Sub(base)
	for i, k := range keys {
		if v, ok := c.Get(k); ok && v == vals[i] {
			res.Held++
		}
	}
	runtime.KeepAlive(keys)
	runtime.KeepAlive(vals)
	return res, nil
}

// Config is a whole run.
type Config struct {
	Caches []string
	Sizes  []int
	TTL    time.Duration
	Rounds int
	// Churn, if not 0, adds a job with that churn (see Job) for every
	// bounded cache of Go values (adapter.KindCache) at every size.
	Churn    int
	Args     []string
	Progress io.Writer
}

// Measure runs every cache at every size, each in a fresh process, round
// after round, the caches' order rotated each round.
func Measure(cfg Config) ([]Result, error) {
	if cfg.Rounds < 1 || len(cfg.Caches) == 0 || len(cfg.Sizes) == 0 {
		return nil, fmt.Errorf("footprint: nothing to measure")
	}
	var out []Result
	n := len(cfg.Caches)
	for round := range cfg.Rounds {
		order := slices.Concat(cfg.Caches[round%n:], cfg.Caches[:round%n])
		for _, size := range cfg.Sizes {
			for _, name := range order {
				jobs := []Job{{Cache: name, Entries: size, TTL: cfg.TTL}}
				if info, _ := adapter.LookupString(name); cfg.Churn > 0 && info.Kind == adapter.KindCache {
					jobs = append(jobs, Job{Cache: name, Entries: size, TTL: cfg.TTL, Churn: cfg.Churn})
				}
				for _, j := range jobs {
					var r Result
					if err := subproc.Run(j, &r, cfg.Args, cfg.Progress); err != nil {
						return nil, fmt.Errorf("%s with %d entries (churn %d): %w", name, size, j.Churn, err)
					}
					out = append(out, r)
					if cfg.Progress != nil {
						fmt.Fprintf(cfg.Progress, "round %d/%d  %-10s %8d entries  churn %d  held %8d  heap %8.1f B/entry  rss %8.1f B/entry\n",
							round+1, cfg.Rounds, name, size, j.Churn, r.Held, r.HeapPerEntry(), r.RSSPerEntry())
					}
				}
			}
		}
	}
	return out, nil
}
