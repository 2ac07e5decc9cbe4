// Package visibility measures whether a cache's writes are seen: the
// share of Sets that a Get right after, on the same goroutine, does not
// find (ristretto applies Sets asynchronously and drops them under
// contention), and what a concurrent replay costs in hit ratio compared
// with a single-threaded one (lossy read buffers and dropped writes can
// cost hits).
package visibility

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/workload"
)

// ProbeCapacity is the capacity of the caches in the probes: far more
// than the keys they write, so that nothing needs to be evicted and a
// miss can only be a write that was delayed, dropped or refused.
const ProbeCapacity = 1 << 20

// Probe is the outcome of one probe run: Sets followed at once by a Get
// of the same key on the same goroutine.
type Probe struct {
	Cache      string `json:"cache"`
	Goroutines int    `json:"goroutines"`
	// New keys: each Set stores a key never written before.
	Inserts uint64 `json:"inserts"`
	// InsertMissed counts Gets right after an insert that did not find
	// the key; InsertWrong those that found another value.
	InsertMissed uint64 `json:"insert_missed"`
	InsertWrong  uint64 `json:"insert_wrong"`
	// InsertLost counts inserted keys still absent once the cache has
	// applied every pending write (Sync): writes dropped for good.
	InsertLost uint64 `json:"insert_lost"`
	// Updates: each Set gives a present key (one only this goroutine
	// writes) a new value.
	Updates uint64 `json:"updates"`
	// UpdateMissed counts Gets right after an update that found no
	// value at all, UpdateStale those that found an older one.
	UpdateMissed uint64 `json:"update_missed"`
	UpdateStale  uint64 `json:"update_stale"`
	// UpdateLost counts keys whose last update is not their value once
	// the cache has settled (missing or older), out of UpdatedKeys.
	UpdateLost uint64 `json:"update_lost"`
	// UpdatedKeys is the number of keys updated at least once: what
	// UpdateLost is a share of (not Updates: each key gets many).
	UpdatedKeys uint64 `json:"updated_keys,omitempty"`
	// Shared keys: half of the goroutines (at least one) give keys of a
	// shared, settled set new values while the others Get them; every
	// key is present throughout, so every Get should find it.
	// SharedReads counts the Gets (0 with one goroutine), SharedMissed
	// those that did not find the key.
	SharedReads  uint64 `json:"shared_reads"`
	SharedMissed uint64 `json:"shared_missed"`
}

// mix is SplitMix64's finaliser, a bijection: it turns counters into
// keys that look random.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// updateKeys is the number of keys each goroutine updates in turn.
const updateKeys = 256

// The keys of the probes' three parts, apart by their top two bits (0 for
// the inserts, 1 for the updates, 2 for the shared set), so that no part
// writes a key of another: the capacity check in Measure counts them as
// distinct.

// updateKey is the j-th of the keys goroutine g updates.
func updateKey(g, j int) uint64 { return mix(1<<62 | uint64(g)<<40 | uint64(j)) }

// sharedKey is the j-th key of sharedProbe's shared set.
func sharedKey(j uint64) uint64 { return mix(2<<62 | j) }

// RunProbe runs inserts and then updates of a fresh cache built by info,
// with goroutines goroutines sharing total probes of each kind (the first
// total % goroutines doing one more than the others).
func RunProbe(info adapter.Info, goroutines, total int) Probe {
	p := Probe{Cache: info.Name, Goroutines: goroutines}
	per := total / goroutines
	// share is goroutine g's part of total.
	share := func(g int) int {
		if g < total%goroutines {
			return per + 1
		}
		return per
	}
	c := info.New(ProbeCapacity)
	defer c.Close()

	// Inserts. Goroutine g writes keys mix(g<<40 | i): disjoint sets.
	type counts struct{ missed, wrong, stale uint64 }
	res := make([]counts, goroutines)
	run := func(body func(g int) counts) {
		var start sync.WaitGroup
		start.Add(1)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				start.Wait()
				res[g] = body(g)
			})
		}
		start.Done()
		wg.Wait()
	}
	run(func(g int) counts {
		var n counts
		for i := range share(g) {
			k := mix(uint64(g)<<40 | uint64(i))
			c.Set(k, k)
			v, ok := c.Get(k)
			switch {
			case !ok:
				n.missed++
			case v != k:
				n.wrong++
			}
		}
		return n
	})
	for _, n := range res {
		p.InsertMissed += n.missed
		p.InsertWrong += n.wrong
	}
	p.Inserts = uint64(total)
	adapter.Settle(c)
	for g := range goroutines {
		for i := range share(g) {
			k := mix(uint64(g)<<40 | uint64(i))
			if v, ok := c.Get(k); !ok || v != k {
				p.InsertLost++
			}
		}
	}

	// Updates. Goroutine g owns keys mix(1<<62 | g<<40 | j), j <
	// updateKeys, written once and settled before the run; value i+1
	// is the i-th update's.
	upKey := updateKey
	for g := range goroutines {
		for j := range updateKeys {
			c.Set(upKey(g, j), 0)
		}
	}
	adapter.Settle(c)
	last := make([][]uint64, goroutines)
	run(func(g int) counts {
		var n counts
		vals := make([]uint64, updateKeys)
		for i := range share(g) {
			j := i % updateKeys
			k := upKey(g, j)
			val := uint64(i + 1)
			c.Set(k, val)
			vals[j] = val
			v, ok := c.Get(k)
			switch {
			case !ok:
				n.missed++
			case v != val:
				n.stale++
			}
		}
		last[g] = vals
		return n
	})
	for _, n := range res {
		p.UpdateMissed += n.missed
		p.UpdateStale += n.stale
	}
	p.Updates = uint64(total)
	adapter.Settle(c)
	for g := range goroutines {
		for j, want := range last[g] {
			if want == 0 {
				continue // never updated (fewer probes than keys)
			}
			p.UpdatedKeys++
			if v, ok := c.Get(upKey(g, j)); !ok || v != want {
				p.UpdateLost++
			}
		}
	}

	if goroutines > 1 {
		p.SharedReads, p.SharedMissed = sharedProbe(c, goroutines, per)
	}
	return p
}

// updatedKeys returns p.UpdatedKeys, or for a probe recorded without it
// (an older JSON file), the number of keys its updates went to.
func (p Probe) updatedKeys() uint64 {
	if p.UpdatedKeys > 0 || p.Goroutines < 1 {
		return p.UpdatedKeys
	}
	return uint64(p.Goroutines) * min(p.Updates/uint64(p.Goroutines), updateKeys)
}

// sharedKeys is the size of the shared set of sharedProbe.
const sharedKeys = 1024

// sharedProbe has goroutines/2 goroutines give random keys of a shared
// set new values while the others Get random keys of it, each goroutine
// doing per operations, and returns the Gets and the misses.
func sharedProbe(c adapter.Cache, goroutines, per int) (reads, missed uint64) {
	key := sharedKey
	for j := range uint64(sharedKeys) {
		c.Set(key(j), j)
	}
	adapter.Settle(c)
	writers := goroutines / 2
	miss := make([]uint64, goroutines)
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			start.Wait()
			x := mix(uint64(g) + 12345) // a per-goroutine xorshift state
			for i := range per {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				j := x % sharedKeys
				if g < writers {
					c.Set(key(j), j+uint64(i)<<16)
				} else if _, ok := c.Get(key(j)); !ok {
					miss[g]++
				}
			}
		})
	}
	start.Done()
	wg.Wait()
	for _, m := range miss {
		missed += m
	}
	return uint64((goroutines - writers) * per), missed
}

// Replay is the hit ratio of one replay of a key stream.
type Replay struct {
	Cache      string `json:"cache"`
	Goroutines int    `json:"goroutines"`
	Requests   uint64 `json:"requests"`
	Hits       uint64 `json:"hits"`
}

// HitRatio returns the share of requests that hit.
func (r Replay) HitRatio() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Requests)
}

// RunReplay replays keys through a fresh cache of the given capacity:
// Get each key, Set it on a miss. With one goroutine the keys are
// replayed in order; with g goroutines, goroutine i replays keys i, i+g,
// i+2g, …, so that together they follow the stream's order as closely as
// their scheduling allows.
func RunReplay(info adapter.Info, keys []uint64, capacity, goroutines int) Replay {
	c := info.New(capacity)
	defer c.Close()
	hits := make([]uint64, goroutines)
	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			start.Wait()
			var h uint64
			for i := g; i < len(keys); i += goroutines {
				k := keys[i]
				if _, ok := c.Get(k); ok {
					h++
				} else {
					c.Set(k, k)
				}
			}
			hits[g] = h
		})
	}
	start.Done()
	wg.Wait()
	r := Replay{Cache: info.Name, Goroutines: goroutines, Requests: uint64(len(keys))}
	for _, h := range hits {
		r.Hits += h
	}
	return r
}

// Config is a whole run.
type Config struct {
	Caches []adapter.Info
	// ProbeGoroutines are the goroutine counts of the probes.
	ProbeGoroutines []int
	// Probes is the number of inserts, and of updates, of each probe run.
	Probes int
	// ReplayCaches are the caches replayed (bounded ones: the maps' hit
	// ratio is that of an infinite cache).
	ReplayCaches []adapter.Info
	// ReplayCapacity is the replayed caches' capacity; the stream is
	// workload.Evict(Zipf, ReplayCapacity)'s.
	ReplayCapacity   int
	ReplayGoroutines int
	Rounds           int
	Progress         io.Writer
}

// Results are a run's measurements, one entry per run.
type Results struct {
	Probes  []Probe  `json:"probes"`
	Replays []Replay `json:"replays"`
	// StreamLen and StreamKeys describe the replayed stream.
	StreamLen  int `json:"stream_len"`
	StreamKeys int `json:"stream_keys"`
}

// Measure runs the probes and the replays, round after round, with the
// order of the caches rotated each round.
func Measure(cfg Config) (*Results, error) {
	if cfg.Rounds < 1 || cfg.Probes < 1 {
		return nil, fmt.Errorf("visibility: rounds and probes must be positive")
	}
	for _, g := range cfg.ProbeGoroutines {
		// The goroutines share the probes: with fewer probes than
		// goroutines each would do none, and the tables would show an
		// empty run as one without a miss.
		if cfg.Probes < g {
			return nil, fmt.Errorf("visibility: %d probes cannot be shared by %d goroutines", cfg.Probes, g)
		}
		// Every key a probe run writes must fit, or evictions would count
		// as writes dropped.
		if n := cfg.Probes + g*updateKeys + sharedKeys; n > ProbeCapacity {
			return nil, fmt.Errorf("visibility: %d probes with %d goroutines write %d keys, more than the caches' %d", cfg.Probes, g, n, ProbeCapacity)
		}
	}
	w, err := workload.Evict(workload.Zipf, cfg.ReplayCapacity)
	if err != nil {
		return nil, err
	}
	rs := &Results{StreamLen: len(w.Keys), StreamKeys: w.Distinct()}
	for round := range cfg.Rounds {
		for _, g := range cfg.ProbeGoroutines {
			for _, info := range rotate(cfg.Caches, round) {
				p := RunProbe(info, g, cfg.Probes)
				rs.Probes = append(rs.Probes, p)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "round %d/%d  probe  %-12s %2d goroutines  inserts missed %6d lost %6d  updates missed %4d stale %4d lost %4d  shared missed %d\n",
						round+1, cfg.Rounds, info.Name, g, p.InsertMissed, p.InsertLost, p.UpdateMissed, p.UpdateStale, p.UpdateLost, p.SharedMissed)
				}
			}
		}
		replayGs := []int{1}
		if cfg.ReplayGoroutines != 1 {
			replayGs = append(replayGs, cfg.ReplayGoroutines) // with 1, the single-threaded replay is the only one
		}
		for _, info := range rotate(cfg.ReplayCaches, round) {
			for _, g := range replayGs {
				r := RunReplay(info, w.Keys, cfg.ReplayCapacity, g)
				rs.Replays = append(rs.Replays, r)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "round %d/%d  replay %-12s %2d goroutines  hit ratio %.2f%%\n",
						round+1, cfg.Rounds, info.Name, g, 100*r.HitRatio())
				}
			}
		}
	}
	return rs, nil
}

func rotate(caches []adapter.Info, round int) []adapter.Info {
	if len(caches) == 0 {
		return nil
	}
	n := round % len(caches)
	return slices.Concat(caches[n:], caches[:n])
}
