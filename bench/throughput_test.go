package bench

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

// mults are the goroutine counts, as multiples of GOMAXPROCS
// (b.SetParallelism).
var mults = []int{1, 4, 16}

var (
	workloadsMu sync.Mutex
	workloads   = map[string]*workload.Workload{}
)

// loadWorkload builds a workload once per process: the evicting ones draw
// millions of keys.
func loadWorkload(b *testing.B, name string) *workload.Workload {
	b.Helper()
	workloadsMu.Lock()
	defer workloadsMu.Unlock()
	if w, ok := workloads[name]; ok {
		return w
	}
	w, err := workload.ByName(name, workload.EvictCapacity)
	if err != nil {
		b.Fatal(err)
	}
	workloads[name] = w
	return w
}

// BenchmarkGetPut is the field's standard hit-path benchmark (Caffeine's
// GetPutBenchmark): a 32,768-slot scrambled Zipf key array over 10,922
// keys, caches of capacity 32,768 pre-filled, read/write mixes. Every
// goroutine does the whole mix, so every mix has writers at any goroutine
// count. Names: GetPut/mix=75_25/cache=otter/goroutines=8.
func BenchmarkGetPut(b *testing.B) {
	w := loadWorkload(b, "getput")
	for _, pct := range w.ReadPcts {
		b.Run(fmt.Sprintf("mix=%d_%d", pct, 100-pct), func(b *testing.B) {
			benchCaches(b, w, pct)
		})
	}
}

// BenchmarkGetPutWarm is BenchmarkGetPut on caches of half the capacity
// (16,384), which its keys fill past half: the hit path of a warm cache,
// whose policy records reads. Names: GetPutWarm/mix=100_0/cache=otter/goroutines=2.
func BenchmarkGetPutWarm(b *testing.B) {
	w := loadWorkload(b, "getput-warm")
	for _, pct := range w.ReadPcts {
		b.Run(fmt.Sprintf("mix=%d_%d", pct, 100-pct), func(b *testing.B) {
			benchCaches(b, w, pct)
		})
	}
}

// BenchmarkEvict is the evicting workload: keys over a key space 10× the
// capacity (100,000), Zipf (s = 1.01) or uniform; a read is a Get and a
// Set on a miss. Names: Evict/dist=zipf/reads=90/cache=otter/goroutines=2.
// It reports the hit ratio of the Gets as "hit%".
func BenchmarkEvict(b *testing.B) {
	for _, dist := range []workload.Distribution{workload.Zipf, workload.Uniform} {
		b.Run("dist="+string(dist), func(b *testing.B) {
			w := loadWorkload(b, "evict-"+string(dist))
			for _, pct := range w.ReadPcts {
				b.Run(fmt.Sprintf("reads=%d", pct), func(b *testing.B) {
					benchCaches(b, w, pct)
				})
			}
		})
	}
}

func benchCaches(b *testing.B, w *workload.Workload, pct int) {
	for _, info := range adapter.Throughput() {
		b.Run("cache="+info.Name, func(b *testing.B) {
			for _, m := range mults {
				b.Run(fmt.Sprintf("goroutines=%d", m*runtime.GOMAXPROCS(0)), func(b *testing.B) {
					benchCell(b, info, w, pct, m)
				})
			}
		})
	}
}

// benchCell measures one cache in one cell: a fresh, pre-filled cache and
// per-goroutine operation streams, all built before the timer starts.
func benchCell(b *testing.B, info adapter.Info, w *workload.Workload, pct, mult int) {
	c := info.New(w.Capacity)
	defer c.Close()
	w.Prefill(c)
	workers := w.Workers(pct, mult*runtime.GOMAXPROCS(0), uint64(b.N))
	var next atomic.Int64
	b.SetParallelism(mult)
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1) - 1
		workers[i].RunWhile(c, pb.Next)
	})
	b.StopTimer()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "ops/s")
	}
	if w.SetOnMiss {
		var gets, hits uint64
		for _, wk := range workers {
			gets += wk.Gets
			hits += wk.Hits
		}
		if gets > 0 {
			b.ReportMetric(100*float64(hits)/float64(gets), "hit%")
		}
	}
}
