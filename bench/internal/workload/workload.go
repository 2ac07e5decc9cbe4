// Package workload generates the key and operation streams of the
// throughput benchmarks, before any timing, and runs them against a cache.
//
// A Workload is a shared array of keys (a power of two long) plus what the
// cache starts with. A Worker is one goroutine's view of it: it reads the
// key array from its own offset (as Caffeine's benchmarks do; the offsets
// are spread evenly around the array from a random base, so that no
// goroutine trails another closely and re-reads the keys the other has
// just brought into the cache) and decides read or write for every
// operation from its own pre-generated stream, in which exactly the mix's
// share of operations are reads. Every goroutine
// therefore does the whole mix: with 2 goroutines a 75/25 mix still has
// both goroutines writing a quarter of the time, instead of degenerating
// into two readers and no writer as a reader/writer split would.
//
// Everything is drawn from math/rand/v2's PCG with fixed seeds, so the
// same parameters give the same streams on every run.
package workload

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/cachekit/cachekit/bench/internal/adapter"
)

// Workload is a key stream and the way a cache is prepared for it.
type Workload struct {
	// Name identifies the workload in flags and reports: "getput",
	// "getput-warm", "evict-zipf", "evict-uniform".
	Name string
	// Description says how the keys are drawn, for the reports.
	Description string
	// Keys is the key stream; its length is a power of two.
	Keys []uint64
	// KeySpace is the number of keys the stream draws from.
	KeySpace int
	// Capacity is the bound given to the caches.
	Capacity int
	// PrefillKeys are stored, in order, into every cache before timing.
	PrefillKeys []uint64
	// SetOnMiss makes a read that misses store the key (Get, then Set on a
	// miss), as a cache in front of a slower store would.
	SetOnMiss bool
	// ReadPcts are the read shares (in percent) the workload is run with.
	ReadPcts []int
}

// Standard GetPut parameters (Caffeine's GetPutBenchmark).
const (
	// GetPutSize is the length of the key array and the caches' capacity.
	GetPutSize = 1 << 15
	// GetPutItems is the number of keys the array draws from (SIZE/3).
	GetPutItems = GetPutSize / 3
	// GetPutTheta is the Zipf exponent of the GetPut keys.
	GetPutTheta = 0.99
)

// Evicting-workload parameters.
const (
	// EvictCapacity is the default capacity of the evicting workloads.
	EvictCapacity = 100_000
	// EvictMaxCapacity is the largest capacity of the evicting
	// workloads: their key stream is 40× the capacity (4 GiB of keys at
	// this one), and a larger one would not fit in memory, or its length
	// would overflow.
	EvictMaxCapacity = 10_000_000
	// EvictKeySpaceFactor is the key space over the capacity.
	EvictKeySpaceFactor = 10
	// EvictZipfS is the Zipf exponent of the evicting Zipf workload
	// (math/rand/v2's Zipf needs s > 1).
	EvictZipfS = 1.01
	// evictStreamFactor is the key stream's length over the capacity,
	// before rounding up to a power of two: long enough that the keys one
	// goroutine meets in a run keep exceeding the capacity.
	evictStreamFactor = 40
)

// Seeds of the key streams. Operation streams use the seed given to
// Workers.
const (
	getPutSeed  = 0x6765747075740001
	evictSeedZ  = 0x6576696374000001
	evictSeedU  = 0x6576696374000002
	offsetsSeed = 0x6f66667365747300
)

// GetPut returns the field's standard hit-path workload: a 32,768-slot
// key array drawn from a scrambled Zipf distribution (θ = 0.99) over
// 10,922 keys, caches of capacity 32,768 pre-filled with every key of the
// array, so nothing is evicted, and mixes 100/0, 75/25, 50/50, 25/75 and
// 0/100. A read is a Get alone; a write is a Set of a key that is present.
func GetPut() *Workload {
	r := rand.New(rand.NewPCG(getPutSeed, 0))
	z := newScrambledZipf(r, GetPutItems, GetPutTheta)
	keys := make([]uint64, GetPutSize)
	for i := range keys {
		keys[i] = z.next()
	}
	return &Workload{
		Name: "getput",
		Description: fmt.Sprintf("a %d-slot key array drawn from a scrambled Zipf distribution (θ = %.2f, YCSB's generator) over %d keys; "+
			"capacity %d, pre-filled with every key of the array, so nothing is evicted; a read is a Get, a write a Set of a present key",
			GetPutSize, GetPutTheta, GetPutItems, GetPutSize),
		Keys:        keys,
		KeySpace:    GetPutItems,
		Capacity:    GetPutSize,
		PrefillKeys: keys,
		ReadPcts:    []int{100, 75, 50, 25, 0},
	}
}

// GetPutWarm returns GetPut on a warm cache: the same key array, mixes and
// pre-fill, with a capacity of GetPutSize/2 (16,384). The array's distinct
// keys (about 9,700) then fill the cache past half its capacity, where a
// W-TinyLFU cache starts recording reads for its policy (cachekit, and otter
// like Caffeine, skip the recording below that, as nothing will be evicted
// for a while: in GetPut itself every key fits in a third of the cache), and
// still nothing is evicted. It measures the hit path of a cache that holds
// its whole working set, the usual state of a cache sized generously.
func GetPutWarm() *Workload {
	w := GetPut()
	w.Name = "getput-warm"
	w.Capacity = GetPutSize / 2
	w.Description = fmt.Sprintf("the getput key array (%d slots, scrambled Zipf θ = %.2f over %d keys) on caches of capacity %d, "+
		"pre-filled with every key of the array: over half full, so a W-TinyLFU cache records its reads, and nothing is evicted; "+
		"a read is a Get, a write a Set of a present key",
		GetPutSize, GetPutTheta, GetPutItems, w.Capacity)
	return w
}

// Distribution names an evicting workload's key distribution.
type Distribution string

// The evicting workloads' distributions.
const (
	Zipf    Distribution = "zipf"
	Uniform Distribution = "uniform"
)

// Evict returns an evicting workload for caches of the given capacity:
// keys drawn from a key space 10× the capacity, Zipf-distributed
// (s = 1.01) or uniform, each rank turned into a random-looking key by a
// bijective mix; a read is a Get followed by a Set on a miss, a write a
// Set; read shares 100%, 90%, 75% and 50%. Caches are pre-filled with
// keys drawn from the same distribution after the stream (not the
// stream's own first keys: a goroutine starting just before them would
// find them cached) until 2× capacity distinct keys are drawn, so the
// bounded ones are full and evicting when timing starts. The stream is 40× the capacity rounded up to a power of two
// (4,194,304 keys for 100,000).
func Evict(dist Distribution, capacity int) (*Workload, error) {
	if capacity < 16 {
		return nil, fmt.Errorf("workload: capacity %d is too small", capacity)
	}
	if capacity > EvictMaxCapacity {
		return nil, fmt.Errorf("workload: capacity %d is too large (at most %d: the key stream is %d× the capacity)", capacity, EvictMaxCapacity, evictStreamFactor)
	}
	space := uint64(capacity) * EvictKeySpaceFactor
	n := 1 << bits.Len(uint(evictStreamFactor*capacity-1))
	keys := make([]uint64, n)
	var prefill []uint64
	// fill draws pre-fill keys until 2× capacity distinct ones are drawn,
	// keeping the repeats (the policies see the distribution's skew): a
	// skewed distribution's 2× capacity draws hold far fewer distinct keys
	// (Zipf: 62,521 for a capacity of 100,000) and would leave the caches
	// part empty.
	fill := func(draw func() uint64) {
		seen := make(map[uint64]struct{}, 2*capacity)
		for len(seen) < 2*capacity {
			k := draw()
			seen[k] = struct{}{}
			prefill = append(prefill, k)
		}
	}
	var desc string
	switch dist {
	case Zipf:
		r := rand.New(rand.NewPCG(evictSeedZ, uint64(capacity)))
		z := rand.NewZipf(r, EvictZipfS, 1, space-1)
		for i := range keys {
			keys[i] = mix64(z.Uint64())
		}
		fill(func() uint64 { return mix64(z.Uint64()) })
		desc = fmt.Sprintf("a %d-key stream drawn from a Zipf distribution (s = %.2f, math/rand/v2) over %d keys (%d× the capacity)",
			n, EvictZipfS, space, EvictKeySpaceFactor)
	case Uniform:
		r := rand.New(rand.NewPCG(evictSeedU, uint64(capacity)))
		for i := range keys {
			keys[i] = mix64(r.Uint64N(space))
		}
		fill(func() uint64 { return mix64(r.Uint64N(space)) })
		desc = fmt.Sprintf("a %d-key stream drawn uniformly over %d keys (%d× the capacity)", n, space, EvictKeySpaceFactor)
	default:
		return nil, fmt.Errorf("workload: unknown distribution %q", dist)
	}
	return &Workload{
		Name: "evict-" + string(dist),
		Description: desc + fmt.Sprintf("; capacity %d, pre-filled with %d further keys drawn the same way (until %d distinct); a read is a Get and a Set on a miss, a write a Set",
			capacity, len(prefill), 2*capacity),
		Keys:        keys,
		KeySpace:    int(space),
		Capacity:    capacity,
		PrefillKeys: prefill,
		SetOnMiss:   true,
		ReadPcts:    []int{100, 90, 75, 50},
	}, nil
}

// Names lists the workloads ByName knows.
var Names = []string{"getput", "getput-warm", "evict-zipf", "evict-uniform"}

// ByName builds a workload by name; capacity applies to the evicting ones.
func ByName(name string, capacity int) (*Workload, error) {
	switch name {
	case "getput":
		return GetPut(), nil
	case "getput-warm":
		return GetPutWarm(), nil
	case "evict-zipf":
		return Evict(Zipf, capacity)
	case "evict-uniform":
		return Evict(Uniform, capacity)
	}
	return nil, fmt.Errorf("workload: unknown workload %q (known: %s)", name, strings.Join(Names, ", "))
}

// Distinct returns the number of distinct keys in the stream.
func (w *Workload) Distinct() int {
	seen := make(map[uint64]struct{}, len(w.Keys))
	for _, k := range w.Keys {
		seen[k] = struct{}{}
	}
	return len(seen)
}

// syncEvery is how many prefill Sets go between two Syncs of a cache that
// applies writes asynchronously, so that its write buffer never overflows
// and drops part of the prefill.
const syncEvery = 1024

// Prefill stores the workload's prefill keys into c (each key's value is
// the key) and waits until an asynchronous cache has applied them.
func (w *Workload) Prefill(c adapter.Cache) {
	s, _ := c.(adapter.Syncer)
	for i, k := range w.PrefillKeys {
		c.Set(k, k)
		if s != nil && i%syncEvery == syncEvery-1 {
			s.Sync()
		}
	}
	if s != nil {
		s.Sync()
	}
}

// opsLen is the length of a worker's operation stream.
const opsLen = 1 << 15

// Workers returns n workers for the given read share (0 to 100), each with
// its own offset into the key stream and its own operation stream, in
// which exactly readPct% of the operations (rounded) are reads, shuffled.
// The offsets are len(Keys)/n apart, from a base drawn from seed. The same
// seed gives the same workers.
func (w *Workload) Workers(readPct, n int, seed uint64) []*Worker {
	if readPct < 0 || readPct > 100 {
		panic(fmt.Sprintf("workload: read share %d%% is out of range", readPct))
	}
	base := rand.New(rand.NewPCG(offsetsSeed, seed)).Uint64N(uint64(len(w.Keys)))
	mask := uint64(len(w.Keys) - 1)
	reads := (opsLen*readPct + 50) / 100
	out := make([]*Worker, n)
	for i := range out {
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		ops := make([]bool, opsLen)
		for j := range reads {
			ops[j] = true
		}
		r.Shuffle(opsLen, func(a, b int) { ops[a], ops[b] = ops[b], ops[a] })
		bitset := make([]uint64, opsLen/64)
		for j, read := range ops {
			if read {
				bitset[j/64] |= 1 << (j % 64)
			}
		}
		out[i] = &Worker{
			keys:      w.Keys,
			mask:      mask,
			pos:       (base + uint64(i)*uint64(len(w.Keys))/uint64(n)) & mask,
			reads:     bitset,
			setOnMiss: w.SetOnMiss,
		}
	}
	return out
}

// Worker is one goroutine's stream of operations. A Worker must be used by
// one goroutine at a time.
type Worker struct {
	keys      []uint64
	mask      uint64
	pos       uint64 // the next operation's index
	reads     []uint64
	setOnMiss bool

	// Counters, updated at the end of each Run.
	Ops, Gets, Hits uint64
}

// Run performs the worker's next n operations on c.
func (w *Worker) Run(c adapter.Cache, n int) {
	keys, mask, reads, setOnMiss := w.keys, w.mask, w.reads, w.setOnMiss
	pos := w.pos
	var gets, hits uint64
	for range n {
		k := keys[pos&mask]
		op := pos & (opsLen - 1)
		pos++
		if reads[op/64]&(1<<(op%64)) == 0 {
			c.Set(k, k)
			continue
		}
		gets++
		if _, ok := c.Get(k); ok {
			hits++
		} else if setOnMiss {
			c.Set(k, k)
		}
	}
	w.Ops += pos - w.pos
	w.pos = pos
	w.Gets += gets
	w.Hits += hits
}

// RunWhile performs the worker's next operations on c as long as next
// returns true (next is testing.PB.Next in the Go benchmarks). It is Run
// with a different loop condition; the two are kept apart so that neither
// pays for the other's.
func (w *Worker) RunWhile(c adapter.Cache, next func() bool) {
	keys, mask, reads, setOnMiss := w.keys, w.mask, w.reads, w.setOnMiss
	pos := w.pos
	var gets, hits uint64
	for next() {
		k := keys[pos&mask]
		op := pos & (opsLen - 1)
		pos++
		if reads[op/64]&(1<<(op%64)) == 0 {
			c.Set(k, k)
			continue
		}
		gets++
		if _, ok := c.Get(k); ok {
			hits++
		} else if setOnMiss {
			c.Set(k, k)
		}
	}
	w.Ops += pos - w.pos
	w.pos = pos
	w.Gets += gets
	w.Hits += hits
}
