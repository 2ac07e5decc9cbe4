// Package gcimpact measures what a cache full of entries costs the
// garbage collector, and through it the rest of the program: with a cache
// holding N entries of 100-byte values, the duration of a forced GC, the
// GC's CPU time while the cache's entries are steadily replaced, and the
// tail latency of an unrelated request loop that allocates, running at
// the same time. In current Go the stop-the-world pauses stay short
// either way; what grows with the number of heap objects is the mark
// work, which takes CPU from the program and slows the goroutines made to
// assist it.
//
// Each measurement runs in a fresh process (package subproc).
package gcimpact

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/histogram"
	"github.com/cachekit/cachekit/bench/internal/memstat"
)

// None is the name of the baseline without any cache.
const None = "none"

// Job is one measurement: a cache holding Entries entries.
type Job struct {
	Cache string `json:"cache"`
	// Capacity is the number of entries the cache is built for; Entries
	// the number stored (0: the cache is built and left empty).
	Capacity   int `json:"capacity"`
	Entries    int `json:"entries"`
	ValueBytes int `json:"value_bytes"`
	// ForcedGCs is the least number of forced collections timed: more
	// are run, up to maxForced, until they have taken a second in all,
	// so that the short ones of a small heap are sampled often enough to
	// see past the noise of a shared machine.
	ForcedGCs int `json:"forced_gcs"`
	// ChurnRate is the Sets per second of the churn: existing keys get
	// fresh values. With no entries, the values are allocated and
	// dropped, so that the allocation rate is the same.
	ChurnRate int `json:"churn_rate"`
	// RequestRate is the requests per second of the request loop.
	RequestRate int `json:"request_rate"`
	// MinWindow and MaxWindow bound the churn's duration: it lasts at
	// least MinWindow and until MinCycles collections have finished, but
	// no longer than MaxWindow.
	MinWindow time.Duration `json:"min_window"`
	MaxWindow time.Duration `json:"max_window"`
	MinCycles int           `json:"min_cycles"`
	Seed      uint64        `json:"seed"`
}

// Result is what a Job measured.
type Result struct {
	Cache   string `json:"cache"`
	Entries int    `json:"entries"`
	Held    int    `json:"held"` // entries present after the fill (counted by the cache, or by Gets)
	// Memory is what the process held after the fill minus before the
	// cache was built, both after a forced GC.
	Memory memstat.Delta `json:"memory"`
	Fill   time.Duration `json:"fill"`
	// FillMaxSet is the longest Set of the fill (the waits for
	// asynchronous caches, every syncEvery Sets, not counted).
	FillMaxSet time.Duration `json:"fill_max_set"`
	// Forced are the forced collections' wall-clock durations, and
	// ForcedCPU the GC CPU time they took in all, by runtime/metrics.
	Forced    []time.Duration `json:"forced"`
	ForcedCPU float64         `json:"forced_gc_cpu_seconds"`
	// ForcedProcessCPU is the CPU time the whole process used during the
	// forced collections (getrusage), which nothing else ran: unlike
	// wall-clock time, it does not grow when other processes hold the
	// CPUs.
	ForcedProcessCPU time.Duration `json:"forced_process_cpu,omitempty"`
	// The churn window.
	Window time.Duration `json:"window"`
	Cycles uint64        `json:"cycles"`
	GCCPU  float64       `json:"gc_cpu_seconds"`
	// TotalCPU is /cpu/classes/total over the window, which runtime/metrics
	// updates only at each collection: it spans from the last collection
	// before the window to the last one in it, not the window itself.
	// GCCPU likewise counts the collections completed in the window.
	TotalCPU   float64       `json:"total_cpu_seconds"`
	MaxPause   time.Duration `json:"max_pause"` // longest stop-the-world pause, to a histogram bucket's bound
	ChurnSets  uint64        `json:"churn_sets"`
	Requests   uint64        `json:"requests"`
	P50        time.Duration `json:"p50"`
	P99        time.Duration `json:"p99"`
	P999       time.Duration `json:"p999"`
	MaxLatency time.Duration `json:"max_latency"`
}

// ForcedMin returns the fastest forced collection's duration: the one
// least disturbed by other work on the machine (on a busy machine a
// collection's workers wait for a CPU, which the median shows).
func (r Result) ForcedMin() time.Duration {
	if len(r.Forced) == 0 {
		return 0
	}
	return slices.Min(r.Forced)
}

// ForcedMedian returns the median forced collection's duration (the mean
// of the middle two for an even count).
func (r Result) ForcedMedian() time.Duration {
	if len(r.Forced) == 0 {
		return 0
	}
	s := slices.Clone(r.Forced)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2 // the mean of the middle two, as report.Median
}

// GCCPUPerSecond returns the GC's CPU seconds per second of churn.
func (r Result) GCCPUPerSecond() float64 {
	if r.Window <= 0 {
		return 0
	}
	return r.GCCPU / r.Window.Seconds()
}

// Key returns the i-th key.
func Key(i int) string { return "key:" + strconv.Itoa(i) }

// newValue returns a fresh value of n bytes derived from i.
func newValue(i, n int) []byte {
	v := make([]byte, n)
	for j := 0; j < n; j += 8 {
		v[j] = byte(i >> (j & 31))
	}
	return v
}

// maxForced bounds the forced collections of a job.
const maxForced = 25

// syncEvery is how often the fill waits for asynchronous caches.
const syncEvery = 1024

// RunJob does a Job in this process.
func RunJob(j Job) (Result, error) {
	if j.Entries < 0 || j.Capacity < 1 || j.Entries > j.Capacity || j.ValueBytes < 1 || j.ForcedGCs < 1 ||
		j.ChurnRate < 0 || j.RequestRate < 1 || j.MinWindow <= 0 || j.MaxWindow < j.MinWindow || j.MinCycles < 0 {
		return Result{}, fmt.Errorf("gcimpact: bad job %+v", j)
	}
	res := Result{Cache: j.Cache, Entries: j.Entries}
	base := memstat.Take()
	var c adapter.StringCache[[]byte]
	if j.Cache != None {
		var err error
		c, err = adapter.NewString(j.Cache, adapter.StringConfig[[]byte]{Capacity: j.Capacity, Codec: adapter.BytesCodec{},
			EntryBytes: len(Key(j.Capacity-1)) + j.ValueBytes})
		if err != nil {
			return res, err
		}
		defer c.Close()
		t0 := time.Now()
		for i := range j.Entries {
			k, v := Key(i), newValue(i, j.ValueBytes)
			s := time.Now()
			c.Set(k, v)
			res.FillMaxSet = max(res.FillMaxSet, time.Since(s))
			if i%syncEvery == syncEvery-1 {
				adapter.Settle(c)
			}
		}
		adapter.Settle(c)
		res.Fill = time.Since(t0)
		if n, ok := adapter.Len(c); ok {
			res.Held = n
		}
	}
	res.Memory = memstat.Take().Sub(base)

	// Forced collections.
	cpu0 := readMetrics()
	pcpu0, pcpuOK := processCPU()
	var spent time.Duration
	for i := 0; i < j.ForcedGCs || (spent < time.Second && i < maxForced); i++ {
		t0 := time.Now()
		runtime.GC()
		d := time.Since(t0)
		res.Forced = append(res.Forced, d)
		spent += d
	}
	res.ForcedCPU = readMetrics().gcCPU - cpu0.gcCPU
	if pcpu1, ok := processCPU(); ok && pcpuOK {
		res.ForcedProcessCPU = pcpu1 - pcpu0
	}

	// The churn window, with the request loop.
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		hist    histogram.Histogram
		churned uint64
		reqs    uint64
	)
	m0 := readMetrics()
	t0 := time.Now()
	wg.Go(func() { churned = churn(c, j, &stop) })
	wg.Go(func() { reqs = requests(j.RequestRate, &hist, &stop) })
	for {
		time.Sleep(100 * time.Millisecond)
		el := time.Since(t0)
		if el >= j.MaxWindow || (el >= j.MinWindow && readMetrics().cycles-m0.cycles >= uint64(j.MinCycles)) {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	res.Window = time.Since(t0)
	m1 := readMetrics()
	res.Cycles = m1.cycles - m0.cycles
	res.GCCPU = m1.gcCPU - m0.gcCPU
	res.TotalCPU = m1.totalCPU - m0.totalCPU
	res.MaxPause = maxPause(m0.pauses, m1.pauses)
	res.ChurnSets = churned
	res.Requests = reqs
	res.P50, res.P99, res.P999 = hist.Quantile(0.5), hist.Quantile(0.99), hist.Quantile(0.999)
	res.MaxLatency = hist.Max()
	if c != nil && res.Held == 0 && j.Entries > 0 {
		for i := range j.Entries {
			if _, ok := c.Get(Key(i)); ok {
				res.Held++
			}
		}
	}
	return res, nil
}

// ticks spreads a rate per second over ticks of a millisecond, carrying
// the fractions over: a rate that is not a multiple of 1000 (or is below
// it) is kept, not rounded down to whole operations per tick nor raised to
// one per tick.
type ticks int

// add returns the operations of the next tick at rate per second.
func (t *ticks) add(rate int) int {
	const perSecond = int(time.Second / time.Millisecond)
	*t += ticks(rate % perSecond)
	n := rate/perSecond + int(*t)/perSecond
	*t %= ticks(perSecond)
	return n
}

// churnSink keeps the compiler from discarding the values of a churn
// without a cache.
var churnSink atomic.Pointer[[]byte]

// churn replaces random entries' values at j.ChurnRate per second until
// stop, and returns the Sets done. Keys are built beforehand for a slice
// of the key space, so that the churn allocates only values.
func churn(c adapter.StringCache[[]byte], j Job, stop *atomic.Bool) uint64 {
	if j.ChurnRate == 0 {
		return 0
	}
	const tick = time.Millisecond
	var keys []string
	if c != nil && j.Entries > 0 {
		keys = make([]string, min(j.Entries, 1<<16))
		r := rand.New(rand.NewPCG(j.Seed, 1))
		for i := range keys {
			keys[i] = Key(r.IntN(j.Entries))
		}
	}
	var n uint64
	var due ticks
	next := time.Now()
	for !stop.Load() {
		for range due.add(j.ChurnRate) {
			v := newValue(int(n), j.ValueBytes)
			if keys != nil {
				c.Set(keys[n%uint64(len(keys))], v)
			} else {
				churnSink.Store(&v)
			}
			n++
		}
		next = next.Add(tick)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		} else if d < -100*tick {
			next = time.Now() // fell behind: do not try to catch up in a burst
		}
	}
	return n
}

// requestSink keeps the request's allocations from being optimised away.
var requestSink atomic.Pointer[[]byte]

// request is the unrelated work: it allocates about 16 KiB in 18 objects
// (a map of 16 buffers of 1 KiB, and the response it assembles from
// them), as decoding and encoding a request would.
func request(i int) {
	parts := make(map[int][]byte, 16)
	for k := range 16 {
		b := make([]byte, 1024)
		b[0], b[1023] = byte(i), byte(k)
		parts[k] = b
	}
	out := make([]byte, 0, 512)
	for k := range 16 {
		out = append(out, parts[k][:32]...)
	}
	requestSink.Store(&out)
}

// requests runs request at about rate per second until stop, in bursts
// of a millisecond's worth followed by a sleep, and records each one's
// latency. It returns the requests done.
func requests(rate int, h *histogram.Histogram, stop *atomic.Bool) uint64 {
	const tick = time.Millisecond
	var n uint64
	var due ticks
	next := time.Now()
	for !stop.Load() {
		for range due.add(rate) {
			t0 := time.Now()
			request(int(n))
			h.Record(time.Since(t0))
			n++
		}
		next = next.Add(tick)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		} else if d < -100*tick {
			next = time.Now()
		}
	}
	return n
}

type sample struct {
	gcCPU, totalCPU float64
	cycles          uint64
	pauses          *metrics.Float64Histogram
}

var metricNames = []string{
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
}

func readMetrics() sample {
	ms := make([]metrics.Sample, len(metricNames))
	for i, n := range metricNames {
		ms[i].Name = n
	}
	metrics.Read(ms)
	s := sample{gcCPU: ms[0].Value.Float64(), totalCPU: ms[1].Value.Float64(), cycles: ms[2].Value.Uint64()}
	if ms[3].Value.Kind() == metrics.KindFloat64Histogram {
		s.pauses = ms[3].Value.Float64Histogram()
	}
	return s
}

// maxPause returns the upper bound of the highest bucket that gained
// pauses between two readings of the pause histogram.
func maxPause(a, b *metrics.Float64Histogram) time.Duration {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return 0
	}
	for i := len(b.Counts) - 1; i >= 0; i-- {
		if b.Counts[i] > a.Counts[i] {
			hi := b.Buckets[i+1]
			if hi > 1e9 { // +Inf
				hi = b.Buckets[i]
			}
			return time.Duration(hi * 1e9)
		}
	}
	return 0
}
