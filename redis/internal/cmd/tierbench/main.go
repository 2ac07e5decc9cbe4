// Command tierbench measures the two-tier cache against its parts on this
// machine, with a redis-server it starts itself (on a free loopback port,
// no persistence): Redis alone, the local cache alone, the tiered cache
// warm (keys in L1) and cold (every read an L1 miss served by Redis), and
// a stampede on one expired key. It prints Markdown tables.
//
//	go run ./internal/cmd/tierbench [-duration 1s] [-read-rounds 5] [-goroutines 100]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/loading"
	"github.com/cachekit/cachekit/redis"
	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

var (
	duration      = flag.Duration("duration", time.Second, "length of each throughput and latency pass")
	readRounds    = flag.Int("read-rounds", 7, "rounds of the read passes (medians are reported)")
	goroutines    = flag.Int("goroutines", 100, "concurrent readers (the passes run with this many, then with 1)")
	keys          = flag.Int("keys", 10_000, "distinct keys (Zipf-distributed reads)")
	zipfS         = flag.Float64("zipf", 1.1, "Zipf exponent s (> 1)")
	valueSize     = flag.Int("value", 100, "value size in bytes")
	stampedeN     = flag.Int("stampede", 1000, "goroutines in the stampede")
	loadDelay     = flag.Duration("load-delay", 10*time.Millisecond, "the simulated database's latency in the stampede")
	rounds        = flag.Int("rounds", 5, "stampede rounds")
	seed          = flag.Uint64("seed", 1, "random seed")
	poolSize      = flag.Int("pool", 0, "go-redis connection pool size (0: its default, 10 per GOMAXPROCS)")
	only1         = flag.Bool("skip-single", false, "skip the single-goroutine passes")
	cpuProfile    = flag.String("cpuprofile", "", "write a CPU profile of the read passes to this file")
	mutexProf     = flag.String("mutexprofile", "", "write a profile of the lock waiting during the read passes to this file")
	readsInFlight = flag.Int("reads-in-flight", 0, "the tier's Options.ReadsInFlight (0: its default; negative: no coalescing of reads)")
	invalidations = flag.Int("invalidations", 1000, "invalidations timed between two instances (half Deletes, half Sets)")
	coldL1        = flag.Int("cold-l1", 1000, "L1 entries of the cold tier (its reads walk through all -keys in turn, so they miss it)")
	mdPath        = flag.String("md", "", "write the whole Markdown document (docs/benchmarks/tiered.md) to this file instead of printing the tables")
)

// out receives the Markdown tables; verdicts collects the figures that the
// document's "Against the targets" section states.
var (
	out      io.Writer = os.Stdout
	verdicts targets
)

type targets struct {
	warmRatio     map[int]float64 // goroutines → tiered warm / local only throughput
	coldP50       map[int]float64 // goroutines → tiered cold / Redis only p50, minus 1
	coldP99       map[int]float64
	loadsPerRound map[int][]int64 // instances → database loads per stampede round
	warmL2Reads   uint64
	warmL1Hits    uint64
	// invalidations that did not reach the other instance within 1s
	invalidationMissed int
}

func main() {
	flag.Parse()
	var doc bytes.Buffer
	if *mdPath != "" {
		out = &doc
	} else {
		fmt.Print("# tierbench\n\n")
	}
	verdicts = targets{warmRatio: map[int]float64{}, coldP50: map[int]float64{}, coldP99: map[int]float64{}, loadsPerRound: map[int][]int64{}}
	err := run()
	if err == nil && *mdPath != "" {
		err = os.WriteFile(*mdPath, []byte(document(doc.String())), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tierbench:", err)
		os.Exit(1)
	}
}

func run() error {
	if err := checkFlags(); err != nil {
		return err
	}
	bin, err := redistest.Binary()
	if err != nil {
		return err
	}
	srv, err := redistest.Start(bin)
	if err != nil {
		return err
	}
	defer srv.Stop()
	header(bin)

	newClient := func() goredis.UniversalClient {
		return goredis.NewUniversalClient(redis.ClientDefaults(&goredis.UniversalOptions{
			Addrs: []string{srv.Addr()}, PoolSize: *poolSize,
		}))
	}
	client := newClient()
	defer client.Close()
	ctx := context.Background()

	value := make([]byte, *valueSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	keyNames := make([]string, *keys)
	for i := range keyNames {
		keyNames[i] = fmt.Sprintf("key:%d", i)
	}
	source := loading.LoaderFunc[string, []byte](func(context.Context, string) ([]byte, error) { return value, nil })

	// Redis holds every key twice: raw for "Redis only", in the tier's
	// envelope (written by a tier) for the tiered runs.
	writer, err := newTier(client, source, "tier:", 0)
	if err != nil {
		return err
	}
	pipe := client.Pipeline()
	for _, k := range keyNames {
		pipe.Set(ctx, "raw:"+k, value, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	for _, k := range keyNames {
		if err := writer.Set(ctx, k, value); err != nil {
			return err
		}
	}
	writer.Close()

	// Local only: the L1 alone (a loading.Cache), warm.
	local, err := loading.New(loading.Options[string, []byte]{Loader: source, MaxEntries: 2 * *keys, TTL: time.Hour})
	if err != nil {
		return err
	}
	defer local.Close()
	// Tiered, warm: every key in L1.
	warm, err := newTier(client, source, "tier:", 2**keys)
	if err != nil {
		return err
	}
	defer warm.Close()
	// Tiered, cold: the reads walk through the keys in turn, more keys
	// than L1 holds, so (almost) every read misses L1 and is answered by
	// Redis; the stats below say how many.
	cold, err := newTier(client, source, "tier:", *coldL1)
	if err != nil {
		return err
	}
	defer cold.Close()
	// The same without coalescing: every cold read its own round trip.
	alone, err := newTierReads(client, source, "tier:", *coldL1, -1)
	if err != nil {
		return err
	}
	defer alone.Close()
	for _, k := range keyNames {
		_, _ = local.Get(ctx, k)
		_, _ = warm.Get(ctx, k)
	}
	var next, nextAlone atomic.Uint64
	scenarios := []scenario{
		{"Redis only (GET)", func(z *rand.Zipf) bool {
			_, err := client.Get(ctx, "raw:"+keyNames[z.Uint64()]).Bytes()
			return err == nil
		}},
		{"Local only (loading.Cache)", func(z *rand.Zipf) bool {
			_, err := local.Get(ctx, keyNames[z.Uint64()])
			return err == nil
		}},
		{"Tiered, warm (L1 hits)", func(z *rand.Zipf) bool {
			_, err := warm.Get(ctx, keyNames[z.Uint64()])
			return err == nil
		}},
		{"Tiered, cold (L1 miss, Redis hit)", func(z *rand.Zipf) bool {
			_, err := cold.Get(ctx, keyNames[next.Add(1)%uint64(len(keyNames))])
			return err == nil
		}},
		{"Tiered, cold, reads not coalesced (ReadsInFlight -1)", func(z *rand.Zipf) bool {
			_, err := alone.Get(ctx, keyNames[nextAlone.Add(1)%uint64(len(keyNames))])
			return err == nil
		}},
	}
	warmBefore, coldBefore := warm.Stats(), cold.Stats()
	fmt.Fprintf(out, "## Reads\n\n%d keys, Zipf s=%.2f (the cold reads walk through the keys in turn instead), %d-byte values. "+
		"Each round runs every approach in turn (odd rounds in reverse order), one pass of %v untimed (throughput) and one of %v timing every read (percentiles, "+
		"which include the ~%v cost of reading the clock twice); the tables give the median over %d rounds, with the range of the throughput.\n\n",
		*keys, *zipfS, *valueSize, *duration, *duration, clockCost(), *readRounds)
	var results [][]row
	levels := []int{*goroutines, 1}
	if *only1 {
		levels = levels[:1]
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	if *mutexProf != "" {
		runtime.SetMutexProfileFraction(1)
	}
	for _, g := range levels {
		results = append(results, measureAll(scenarios, g))
	}
	pprof.StopCPUProfile()
	if *mutexProf != "" {
		runtime.SetMutexProfileFraction(0)
		if err := writeProfile("mutex", *mutexProf); err != nil {
			return err
		}
	}
	warmAfter, coldAfter := warm.Stats(), cold.Stats()
	for i, g := range levels {
		rows := results[i]
		fmt.Fprintf(out, "### %d goroutine(s)\n\n", g)
		fmt.Fprintln(out, "| approach | ops/s (median) | ops/s (range) | p50 | p99 |")
		fmt.Fprintln(out, "|---|---:|---:|---:|---:|")
		for _, r := range rows {
			fmt.Fprintf(out, "| %s | %s | %s–%s | %s | %s |\n", r.name, ops(r.opsPerSec), ops(r.opsMin), ops(r.opsMax), dur(r.p50), dur(r.p99))
		}
		fmt.Fprintln(out)
		verdicts.warmRatio[g] = pairedRatio(rows[2].ops, rows[1].ops)
		verdicts.coldP50[g] = pairedRatio(durs(rows[3].p50s), durs(rows[0].p50s)) - 1
		verdicts.coldP99[g] = pairedRatio(durs(rows[3].p99s), durs(rows[0].p99s)) - 1
		fmt.Fprintf(out, "Tiered warm / local only throughput: %.1f%% (median of the per-round ratios; target >= 90%%).  \n",
			100*pairedRatio(rows[2].ops, rows[1].ops))
		fmt.Fprintf(out, "Tiered cold / Redis only: p50 %+.1f%%, p99 %+.1f%% (medians of the per-round ratios; target: within 10%%); throughput %.1f%%.  \n",
			100*(pairedRatio(durs(rows[3].p50s), durs(rows[0].p50s))-1), 100*(pairedRatio(durs(rows[3].p99s), durs(rows[0].p99s))-1),
			100*pairedRatio(rows[3].ops, rows[0].ops))
		fmt.Fprintf(out, "Without coalescing, tiered cold / Redis only: p50 %+.1f%%, p99 %+.1f%%; throughput %.1f%%.\n\n",
			100*(pairedRatio(durs(rows[4].p50s), durs(rows[0].p50s))-1), 100*(pairedRatio(durs(rows[4].p99s), durs(rows[0].p99s))-1),
			100*pairedRatio(rows[4].ops, rows[0].ops))
	}
	dw, dc := delta(warmBefore, warmAfter), delta(coldBefore, coldAfter)
	verdicts.warmL2Reads, verdicts.warmL1Hits = dw.L2Reads, dw.L1Hits
	fmt.Fprintf(out, "During the passes the warm tier made %d Redis reads for %d L1 hits; the cold tier had %d L1 hits and %d L1 misses, "+
		"made %d Redis reads (%d hits) and %d loads.\n\n", dw.L2Reads, dw.L1Hits, dc.L1Hits, dc.Local.Misses, dc.L2Reads, dc.L2Hits, dc.Loads)

	if err := stampede(newClient, value); err != nil {
		return err
	}
	return invalidation(newClient, value)
}

// checkFlags refuses the flag values that would leave a table without a
// sample, the readers without keys or the client without a pool (each a
// panic once the run was under way, after the passes before it), the
// readers stuck (an infinite -zipf: rand.Zipf never returns), the
// throughputs without a time, or the cold tier warm (an L1 that holds
// every key).
func checkFlags() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"read-rounds", *readRounds}, {"goroutines", *goroutines}, {"keys", *keys},
		{"stampede", *stampedeN}, {"rounds", *rounds}, {"invalidations", *invalidations},
	} {
		if f.v < 1 {
			return fmt.Errorf("-%s must be at least 1, got %d", f.name, f.v)
		}
	}
	switch {
	case *duration <= 0:
		return fmt.Errorf("-duration must be positive, got %v", *duration)
	case !(*zipfS > 1) || math.IsInf(*zipfS, 1):
		return fmt.Errorf("-zipf must be more than 1 and finite, got %v", *zipfS)
	case *valueSize < 0:
		return fmt.Errorf("-value must not be negative, got %d", *valueSize)
	case *poolSize < 0:
		return fmt.Errorf("-pool must not be negative, got %d", *poolSize)
	case *coldL1 < 1 || *coldL1 >= *keys:
		// 0 is an unbounded L1 and -keys or more hold every key: the
		// "cold" reads would be L1 hits after the first pass.
		return fmt.Errorf("-cold-l1 must be at least 1 and less than -keys (%d), got %d", *keys, *coldL1)
	}
	return nil
}

// invalidation times how long a change made through one instance takes to
// reach another's L1: B holds a key in L1; A deletes it or sets a new
// value; the time from the call on A to B's L1 dropping the key (B's count
// of invalidations received going up, polled in a loop) is one sample.
// One change at a time, alternating Deletes and Sets.
func invalidation(newClient func() goredis.UniversalClient, value []byte) error {
	ctx := context.Background()
	ca, cb := newClient(), newClient()
	defer ca.Close()
	defer cb.Close()
	src := loading.LoaderFunc[string, []byte](func(context.Context, string) ([]byte, error) { return value, nil })
	prefix := fmt.Sprintf("inval:%d:", time.Now().UnixNano())
	a, err := newTier(ca, src, prefix, 10_000)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := newTier(cb, src, prefix, 10_000)
	if err != nil {
		return err
	}
	defer b.Close()
	for _, c := range []*redis.Cache[[]byte]{a, b} {
		for deadline := time.Now().Add(10 * time.Second); !c.Stats().Subscribed; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				return fmt.Errorf("invalidation: no subscription within 10s")
			}
		}
	}
	var lat []time.Duration
	var missed int
	for i := range *invalidations {
		key := fmt.Sprint("k", i)
		if _, err := b.Get(ctx, key); err != nil { // into B's L1
			return err
		}
		before := b.Stats().InvalidationsReceived
		t0 := time.Now()
		if i%2 == 0 {
			err = a.Delete(ctx, key)
		} else {
			err = a.Set(ctx, key, value)
		}
		if err != nil {
			return err
		}
		deadline := t0.Add(time.Second)
		for b.Stats().InvalidationsReceived == before {
			if time.Now().After(deadline) {
				missed++
				break
			}
			runtime.Gosched()
		}
		lat = append(lat, time.Since(t0))
	}
	sa, sb := a.Stats(), b.Stats()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	verdicts.invalidationMissed = missed
	fmt.Fprintf(out, "## Invalidation across instances\n\n"+
		"Two instances (A and B, each its own client) on one prefix. %d times, one at a time: B reads a key into its L1, then A deletes it "+
		"or sets a new value (alternately), which writes Redis and publishes the key's invalidation in one round trip. "+
		"A sample is the time from the call on A to B having dropped the key from its L1.\n\n", *invalidations)
	fmt.Fprintln(out, "| from the call on A to B's L1 dropping the key | p50 | p99 | max | not within 1s |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|")
	fmt.Fprintf(out, "| Delete or Set | %s | %s | %s | %d |\n\n", dur(q(0.5)), dur(q(0.99)), dur(lat[len(lat)-1]), missed)
	mean := time.Duration(0)
	if sb.InvalidationsReceived > 0 {
		mean = sb.InvalidationLag / time.Duration(sb.InvalidationsReceived)
	}
	fmt.Fprintf(out, "B's own statistics (`Stats.InvalidationLag`, from A's publish to B's delete): %d received, mean %s, max %s; "+
		"A sent %d and ignored its own %d.\n\n", sb.InvalidationsReceived, dur(mean), dur(sb.InvalidationLagMax), sa.InvalidationsSent, sa.InvalidationsIgnored)
	return nil
}

func newTier(client goredis.UniversalClient, src loading.Loader[string, []byte], prefix string, entries int) (*redis.Cache[[]byte], error) {
	return newTierReads(client, src, prefix, entries, *readsInFlight)
}

// newTierReads is newTier with Options.ReadsInFlight set to readsInFlight.
func newTierReads(client goredis.UniversalClient, src loading.Loader[string, []byte], prefix string, entries, readsInFlight int) (*redis.Cache[[]byte], error) {
	o := redis.Options[[]byte]{
		Client:  client,
		Loader:  src,
		Prefix:  prefix,
		TTL:     time.Hour,
		Timeout: time.Second,

		ReadsInFlight: readsInFlight,
	}
	o.Local.TTL = time.Hour
	o.Local.MaxEntries = entries
	return redis.New(o)
}

type scenario struct {
	name string
	op   func(*rand.Zipf) bool
}

type row struct {
	name                      string
	opsPerSec, opsMin, opsMax float64
	p50, p99                  time.Duration
	// per round, for ratios between approaches measured in the same round
	ops  []float64
	p50s []time.Duration
	p99s []time.Duration
}

// pairedRatio returns the median over rounds of a's metric over b's, both
// measured in the same round (which cancels most of the drift of a shared
// machine's load between rounds).
func pairedRatio(a, b []float64) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = a[i] / b[i]
	}
	sort.Float64s(r)
	return median(r)
}

func durs(ds []time.Duration) []float64 {
	f := make([]float64, len(ds))
	for i, d := range ds {
		f[i] = float64(d)
	}
	return f
}

// measureAll runs every scenario in turn, *readRounds times, with g
// goroutines: a pass untimed for throughput, a pass timing each call for
// the percentiles. It returns the medians.
func measureAll(scenarios []scenario, g int) []row {
	opss := make([][]float64, len(scenarios))
	p50s := make([][]time.Duration, len(scenarios))
	p99s := make([][]time.Duration, len(scenarios))
	for round := range *readRounds {
		// Odd rounds run the scenarios in reverse order, so that a load on
		// the machine that rises or falls during a round does not favour
		// the scenarios that run first.
		order := make([]int, len(scenarios))
		for i := range order {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(scenarios) - 1 - i
			}
		}
		for _, i := range order {
			sc := scenarios[i]
			n, _ := pass(sc.op, g, false)
			_, h := pass(sc.op, g, true)
			opss[i] = append(opss[i], float64(n)/duration.Seconds())
			p50s[i] = append(p50s[i], h.quantile(0.5))
			p99s[i] = append(p99s[i], h.quantile(0.99))
			fmt.Fprintf(os.Stderr, "g=%d round %d %s: %.0f ops/s, p50 %v, p99 %v\n", g, round, sc.name, opss[i][round], p50s[i][round], p99s[i][round])
		}
	}
	rows := make([]row, len(scenarios))
	for i, sc := range scenarios {
		o := append([]float64(nil), opss[i]...)
		sort.Float64s(o)
		rows[i] = row{name: sc.name, opsPerSec: median(o), opsMin: o[0], opsMax: o[len(o)-1],
			p50: medianDur(p50s[i]), p99: medianDur(p99s[i]), ops: opss[i], p50s: p50s[i], p99s: p99s[i]}
	}
	return rows
}

func median(xs []float64) float64 {
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func medianDur(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func delta(a, b redis.Stats) redis.Stats {
	return redis.Stats{
		L1Hits: b.L1Hits - a.L1Hits, L2Reads: b.L2Reads - a.L2Reads, L2Hits: b.L2Hits - a.L2Hits, Loads: b.Loads - a.Loads,
		Local: loading.Stats{Misses: b.Local.Misses - a.Local.Misses},
	}
}

func pass(op func(*rand.Zipf) bool, goroutines int, timed bool) (uint64, *histogram) {
	var total, failed atomic.Uint64
	var stop atomic.Bool
	hists := make([]*histogram, goroutines)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		wg.Add(1)
		h := &histogram{}
		hists[g] = h
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(*seed, uint64(g)))
			z := rand.NewZipf(r, *zipfS, 1, uint64(*keys-1))
			<-start
			var n, bad uint64
			for !stop.Load() {
				if timed {
					t0 := time.Now()
					ok := op(z)
					h.add(time.Since(t0))
					if !ok {
						bad++
					}
				} else if !op(z) {
					bad++
				}
				n++
			}
			total.Add(n)
			failed.Add(bad)
		}()
	}
	close(start)
	time.Sleep(*duration)
	stop.Store(true)
	wg.Wait()
	if failed.Load() > 0 {
		fmt.Fprintf(os.Stderr, "warning: %d of %d operations failed\n", failed.Load(), total.Load())
	}
	all := &histogram{}
	for _, h := range hists {
		all.merge(h)
	}
	return total.Load(), all
}

// stampede: *stampedeN goroutines want one key that has expired from both
// tiers (so it is in neither) at the same moment; the database takes
// *loadDelay. Compared with the article's tiered cache without single
// flight (GET, on a miss load and SET).
func stampede(newClient func() goredis.UniversalClient, value []byte) error {
	ctx := context.Background()
	type result struct {
		name  string
		loads []int64
		lat   []time.Duration
		reads []uint64
	}
	var results []result
	for _, instances := range []int{1, 2} {
		res := result{name: fmt.Sprintf("cachekit tier, %d instance(s)", instances)}
		for round := range *rounds {
			var loads atomic.Int64
			src := loading.LoaderFunc[string, []byte](func(ctx context.Context, k string) ([]byte, error) {
				loads.Add(1)
				time.Sleep(*loadDelay)
				return value, nil
			})
			var tiers []*redis.Cache[[]byte]
			var clients []goredis.UniversalClient
			for range instances {
				cl := newClient()
				clients = append(clients, cl)
				tr, err := newTier(cl, src, fmt.Sprintf("stampede:%d:", time.Now().UnixNano()), 1000)
				if err != nil {
					return err
				}
				tiers = append(tiers, tr)
			}
			// The same prefix for every instance of this round.
			prefix := fmt.Sprintf("stampede:%d:%d:", instances, round)
			for i := range tiers {
				tiers[i].Close()
				tr, err := newTier(clients[i], src, prefix, 1000)
				if err != nil {
					return err
				}
				tiers[i] = tr
			}
			key := "hot"
			lat := runStampede(func(i int) error {
				_, err := tiers[i%instances].Get(ctx, key)
				return err
			})
			var reads uint64
			for i, tr := range tiers {
				reads += tr.Stats().L2Reads
				tr.Close()
				_ = clients[i].Close()
			}
			res.loads = append(res.loads, loads.Load())
			res.lat = append(res.lat, lat...)
			res.reads = append(res.reads, reads)
		}
		verdicts.loadsPerRound[instances] = res.loads
		results = append(results, res)
	}
	// The article's version without single flight.
	{
		cl := newClient()
		res := result{name: "without single flight (GET, load, SET)"}
		for round := range *rounds {
			var loads atomic.Int64
			key := fmt.Sprintf("naive:%d:%d", time.Now().UnixNano(), round)
			var reads atomic.Uint64
			lat := runStampede(func(int) error {
				reads.Add(1)
				if _, err := cl.Get(ctx, key).Bytes(); err == nil {
					return nil
				}
				loads.Add(1)
				time.Sleep(*loadDelay)
				return cl.Set(ctx, key, value, time.Hour).Err()
			})
			res.loads = append(res.loads, loads.Load())
			res.lat = append(res.lat, lat...)
			res.reads = append(res.reads, reads.Load())
		}
		_ = cl.Close()
		results = append(results, res)
	}
	fmt.Fprintf(out, "## Stampede\n\n%d goroutines released together on one key that is in neither tier (expired); the database takes %v per load; %d rounds, each on a fresh key. With two instances, the goroutines alternate between them.\n\n", *stampedeN, *loadDelay, *rounds)
	fmt.Fprintln(out, "| approach | database loads per round | Redis reads per round | p50 | p99 | max |")
	fmt.Fprintln(out, "|---|---|---|---:|---:|---:|")
	for _, r := range results {
		sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
		q := func(p float64) time.Duration { return r.lat[min(len(r.lat)-1, int(p*float64(len(r.lat))))] }
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", r.name, join(r.loads), join(r.reads), dur(q(0.5)), dur(q(0.99)), dur(r.lat[len(r.lat)-1]))
	}
	fmt.Fprintln(out)
	return nil
}

// runStampede releases *stampedeN goroutines at once on get(i) and returns
// their latencies.
func runStampede(get func(i int) error) []time.Duration {
	lat := make([]time.Duration, *stampedeN)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	var failed atomic.Int64
	for i := range *stampedeN {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			t0 := time.Now()
			if err := get(i); err != nil {
				failed.Add(1)
			}
			lat[i] = time.Since(t0)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	if failed.Load() > 0 {
		fmt.Fprintf(os.Stderr, "warning: %d stampede calls failed\n", failed.Load())
	}
	return lat
}

func join[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// histogram is a log-linear latency histogram: 32 sub-buckets per power of
// two of nanoseconds (about 3% resolution).
type histogram struct {
	counts [64 * 32]uint64
	n      uint64
}

func bucket(ns uint64) int {
	if ns < 32 {
		return int(ns)
	}
	e := bits.Len64(ns) - 6 // keep 5 bits below the leading one
	return (e+1)*32 + int(ns>>uint(e)) - 32
}

func bucketValue(b int) uint64 {
	if b < 32 {
		return uint64(b)
	}
	e := b/32 - 1
	return uint64(b%32+32) << uint(e)
}

func (h *histogram) add(d time.Duration) {
	h.counts[bucket(uint64(max(d, 0)))]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := uint64(math.Ceil(q * float64(h.n)))
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= target && c > 0 {
			return time.Duration(bucketValue(b))
		}
	}
	return 0
}

func clockCost() time.Duration {
	const n = 1_000_000
	t0 := time.Now()
	var sink time.Duration
	for range n {
		sink += time.Since(t0)
	}
	_ = sink
	return time.Since(t0) / n
}

// ops formats a rate, in the unit that its rounded figure fits (999,960
// is 1.00M, not 1000.0k).
func ops(x float64) string {
	switch {
	case x >= 999_950:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 999.5:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// dur formats a duration, in the unit that its rounded figure fits
// (999.96 µs is 1.00 ms, not 1000.0 µs).
func dur(d time.Duration) string {
	switch {
	case d >= 999_950:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1f µs", float64(d)/1e3)
	}
	return fmt.Sprintf("%d ns", d)
}

func header(bin string) {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	ver, _ := exec.Command(bin, "--version").Output()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(out, "## Run\n\n- date: %s\n- Go: %s, GOMAXPROCS %d\n- CPU: %s, %d cores\n- Redis: %s- load average at start: %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.Version(), runtime.GOMAXPROCS(0), cpu, runtime.NumCPU(),
		strings.TrimSpace(string(ver))+"\n", strings.TrimSpace(string(load)))
	fmt.Fprintf(out, "- command: `go run ./internal/cmd/tierbench %s`\n\n", strings.Join(os.Args[1:], " "))
}

// writeProfile writes the named runtime/pprof profile to path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
