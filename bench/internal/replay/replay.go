// Package replay replays real access traces through caches from several
// goroutines at once, the method of the talk "Building a Highly
// Concurrent Cache in Go": the goroutines take consecutive batches of
// the trace from a shared cursor, Get every key of a batch, then Set the
// keys that missed; the hit ratio, the time per Get and the time per Set
// are reported.
package replay

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/sim"
)

// Batch is the number of consecutive trace keys a goroutine takes at a
// time: the talk's "event log" of keys looked up together.
const Batch = 16

// Trace is a trace to replay at a capacity.
type Trace struct {
	Name     string `json:"name"`
	Capacity int    `json:"capacity"`
}

// DefaultTraces are the traces of replay.md: the long ones of the suite,
// each at a capacity of its suite's list.
var DefaultTraces = []Trace{
	{"arc-oltp", 5000},
	{"arc-p3", 100000},
	{"scarab-recs", 50000},
	{"cache2k-web12", 800},
	{"zipf-1.0001", 10000},
}

// ParseTraces parses "name@capacity,…". A trace at a capacity given twice
// is refused: it would be replayed twice and its results mixed up.
func ParseTraces(s string) ([]Trace, error) {
	var out []Trace
	for f := range strings.SplitSeq(s, ",") {
		name, c, ok := strings.Cut(strings.TrimSpace(f), "@")
		n, err := strconv.Atoi(c)
		if !ok || name == "" || err != nil || n < 1 {
			return nil, fmt.Errorf("bad trace %q (want name@capacity)", f)
		}
		if slices.Contains(out, Trace{name, n}) {
			return nil, fmt.Errorf("trace %s@%d given twice", name, n)
		}
		out = append(out, Trace{name, n})
	}
	return out, nil
}

// mix is SplitMix64's finaliser, a bijection: trace keys are block
// numbers and small integers, adversarial for weak hash functions, so
// every cache gets them scrambled the same way.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Load reads the named trace (name.txt.gz) from dir, with its keys
// scrambled by mix.
func Load(dir, name string) ([]uint64, error) {
	keys, err := sim.Load(filepath.Join(dir, name+".txt.gz"))
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		keys[i] = mix(k)
	}
	return keys, nil
}

// Counts are what a replay measured.
type Counts struct {
	Gets, Hits, Sets uint64
	GetTime, SetTime time.Duration // summed over the goroutines
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Gets += o.Gets
	c.Hits += o.Hits
	c.Sets += o.Sets
	c.GetTime += o.GetTime
	c.SetTime += o.SetTime
}

// Worker replays batches of keys: Get each key of a batch, timing the
// batch's Gets together, then Set the keys that missed, timing the Sets
// together (two readings of the clock per batch, so the clock costs
// little per operation).
type Worker struct {
	misses []uint64
	Counts
}

// Do replays one batch through c.
func (w *Worker) Do(c adapter.Cache, batch []uint64) {
	w.misses = w.misses[:0]
	t0 := time.Now()
	for _, k := range batch {
		if _, ok := c.Get(k); ok {
			w.Hits++
		} else {
			w.misses = append(w.misses, k)
		}
	}
	t1 := time.Now()
	for _, k := range w.misses {
		c.Set(k, k)
	}
	t2 := time.Now()
	w.Gets += uint64(len(batch))
	w.Sets += uint64(len(w.misses))
	w.GetTime += t1.Sub(t0)
	if len(w.misses) > 0 {
		w.SetTime += t2.Sub(t1)
	}
}

// Result is one replay of a trace through one cache.
type Result struct {
	Trace      string        `json:"trace"`
	Capacity   int           `json:"capacity"`
	Cache      string        `json:"cache"`
	Goroutines int           `json:"goroutines"`
	Gets       uint64        `json:"gets"`
	Hits       uint64        `json:"hits"`
	Sets       uint64        `json:"sets"`
	GetTime    time.Duration `json:"get_time"`
	SetTime    time.Duration `json:"set_time"`
	Wall       time.Duration `json:"wall"`
}

// HitRatio returns the share of Gets that hit.
func (r Result) HitRatio() float64 { return float64(r.Hits) / float64(max(r.Gets, 1)) }

// ReadNs returns the time a goroutine spent per Get.
func (r Result) ReadNs() float64 { return float64(r.GetTime.Nanoseconds()) / float64(max(r.Gets, 1)) }

// WriteNs returns the time a goroutine spent per Set.
func (r Result) WriteNs() float64 { return float64(r.SetTime.Nanoseconds()) / float64(max(r.Sets, 1)) }

// PerSec returns the requests (Gets) per second of wall-clock time.
func (r Result) PerSec() float64 { return float64(r.Gets) / max(r.Wall.Seconds(), 1e-9) }

// Run replays keys once through a fresh cache built by info for capacity
// entries, with goroutines goroutines taking batches from a shared
// cursor, and returns the counts and the wall-clock time of the replay.
func Run(info adapter.Info, keys []uint64, capacity, goroutines int) (Counts, time.Duration) {
	c := info.New(capacity)
	defer c.Close()
	var (
		cursor atomic.Int64
		wg     sync.WaitGroup
		start  sync.WaitGroup
		out    = make([]Counts, goroutines)
	)
	start.Add(1)
	for g := range goroutines {
		wg.Go(func() {
			w := &Worker{misses: make([]uint64, 0, Batch)}
			start.Wait()
			for {
				i := int(cursor.Add(Batch)) - Batch
				if i >= len(keys) {
					break
				}
				w.Do(c, keys[i:min(i+Batch, len(keys))])
			}
			out[g] = w.Counts
		})
	}
	t0 := time.Now()
	start.Done()
	wg.Wait()
	wall := time.Since(t0)
	var total Counts
	for _, o := range out {
		total.Add(o)
	}
	return total, wall
}

// Config is a whole run.
type Config struct {
	Dir        string
	Traces     []Trace
	Caches     []adapter.Info
	Goroutines []int
	Rounds     int
	Progress   io.Writer
}

// TraceInfo describes a replayed trace.
type TraceInfo struct {
	Trace
	Requests int `json:"requests"`
	Unique   int `json:"unique"`
}

// Measure replays every trace through every cache with every goroutine
// count, round after round, the caches' order rotated each round.
func Measure(cfg Config) ([]TraceInfo, []Result, error) {
	if cfg.Rounds < 1 || len(cfg.Traces) == 0 || len(cfg.Caches) == 0 || len(cfg.Goroutines) == 0 {
		return nil, nil, fmt.Errorf("replay: nothing to measure")
	}
	var infos []TraceInfo
	var out []Result
	for _, tr := range cfg.Traces {
		keys, err := Load(cfg.Dir, tr.Name)
		if err != nil {
			return nil, nil, err
		}
		seen := make(map[uint64]struct{}, len(keys)/4)
		for _, k := range keys {
			seen[k] = struct{}{}
		}
		infos = append(infos, TraceInfo{Trace: tr, Requests: len(keys), Unique: len(seen)})
		n := len(cfg.Caches)
		for round := range cfg.Rounds {
			order := slices.Concat(cfg.Caches[round%n:], cfg.Caches[:round%n])
			for _, g := range cfg.Goroutines {
				for _, info := range order {
					runtime.GC()
					ct, wall := Run(info, keys, tr.Capacity, g)
					r := Result{Trace: tr.Name, Capacity: tr.Capacity, Cache: info.Name, Goroutines: g, Gets: ct.Gets, Hits: ct.Hits,
						Sets: ct.Sets, GetTime: ct.GetTime, SetTime: ct.SetTime, Wall: wall}
					out = append(out, r)
					if cfg.Progress != nil {
						fmt.Fprintf(cfg.Progress, "round %d/%d  %-14s @%-7d %-12s %2d goroutines  hit %6.2f%%  read %7.1f ns/op  write %7.1f ns/op  %6.2f M req/s\n",
							round+1, cfg.Rounds, tr.Name, tr.Capacity, info.Name, g, 100*r.HitRatio(), r.ReadNs(), r.WriteNs(), r.PerSec()/1e6)
					}
				}
			}
		}
	}
	return infos, out, nil
}
