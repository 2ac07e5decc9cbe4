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
	// Instances is the number of caches of Entries entries built and
	// measured together (0 means 1); the figures per entry divide by
	// Entries × Instances (see Config.MinTotal).
	Instances int `json:"instances,omitempty"`
}

// Result is what a Job measured.
type Result struct {
	Cache   string `json:"cache"`
	Entries int    `json:"entries"`
	Churn   int    `json:"churn,omitempty"`
	// Instances is the number of caches measured together (0 means 1).
	Instances int `json:"instances,omitempty"`
	// Held is the number of the pairs that a cache held at the end: the
	// mean over the instances, rounded down.
	Held   int           `json:"held"`
	Memory memstat.Delta `json:"memory"`
}

// entries returns the number of entries the measurement is divided by.
func (r Result) entries() float64 { return float64(max(r.Entries, 1) * max(r.Instances, 1)) }

// HeapPerEntry returns the growth of the heap in use per entry.
func (r Result) HeapPerEntry() float64 { return float64(r.Memory.HeapInuse) / r.entries() }

// RSSPerEntry returns the growth of the resident set per entry.
func (r Result) RSSPerEntry() float64 { return float64(r.Memory.RSS) / r.entries() }

// ObjectsPerEntry returns the growth of the number of heap objects per
// entry.
func (r Result) ObjectsPerEntry() float64 { return float64(r.Memory.HeapObjects) / r.entries() }

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
//
// With j.Instances, it builds and fills that many caches, one after the
// other, with the same pairs, and measures them together: the heap grows
// by whole 8 kB pages and the allocator's spans fill unevenly, so one
// cache of 1,000 entries is measured to within 8 bytes per entry or so,
// and a hundred of them to within a tenth of that.
func RunJob(j Job) (Result, error) {
	if j.Entries < 1 || j.TTL < 0 || j.Churn < 0 || j.Instances < 0 {
		return Result{}, fmt.Errorf("footprint: bad job %+v", j)
	}
	keys, vals := Pairs(j.Entries * (1 + j.Churn))
	res := Result{Cache: j.Cache, Entries: j.Entries, Churn: j.Churn, Instances: j.Instances}
	base := memstat.Take()
	caches := make([]adapter.StringCache[string], max(j.Instances, 1))
	defer func() {
		for _, c := range caches {
			if c != nil {
				c.Close()
			}
		}
	}()
	for n := range caches {
		c, err := adapter.NewString(j.Cache, adapter.StringConfig[string]{Capacity: j.Entries, TTL: j.TTL,
			Codec: adapter.StringCodec{}, EntryBytes: PairBytes})
		if err != nil {
			return Result{}, err
		}
		caches[n] = c
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
	}
	res.Memory = memstat.Take().Sub(base)
	held := 0
	for _, c := range caches {
		for i, k := range keys {
			if v, ok := c.Get(k); ok && v == vals[i] {
				held++
			}
		}
	}
	res.Held = held / len(caches)
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
	Churn int
	// MinTotal, if more than a size, makes every job of that size build
	// ceil(MinTotal / size) caches and measure them together (see
	// RunJob), so that small sizes are measured as precisely as large
	// ones. 0: one cache per job.
	MinTotal int
	Args     []string
	Progress io.Writer
}

// instances returns the number of caches a job of size entries builds.
func (cfg Config) instances(size int) int {
	if cfg.MinTotal <= size {
		return 1
	}
	return (cfg.MinTotal + size - 1) / size
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
				k := cfg.instances(size)
				jobs := []Job{{Cache: name, Entries: size, TTL: cfg.TTL, Instances: k}}
				if info, _ := adapter.LookupString(name); cfg.Churn > 0 && info.Kind == adapter.KindCache {
					jobs = append(jobs, Job{Cache: name, Entries: size, TTL: cfg.TTL, Churn: cfg.Churn, Instances: k})
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
