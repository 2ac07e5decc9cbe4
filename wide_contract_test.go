package cachekit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestWideModelWideConfigs runs the model harness (model_test.go) on
// configurations that fmDecodeConfig does not produce.
func TestWideModelWideConfigs(t *testing.T) {
	type bound struct {
		entries int
		weight  uint64
	}
	bounds := []bound{{2, 0}, {5, 0}, {16, 0}, {100, 0}, {0, 3}, {0, 100}, {0, 7}}
	ttls := []time.Duration{0, time.Millisecond, time.Hour}
	jitters := []float64{0, 0.5, 0.999}
	policies := append([]string{""}, PolicyNames()...)
	seed := uint64(0)
	for _, b := range bounds {
		for _, pol := range policies {
			for vt := range 4 {
				seed++
				r := rand.New(rand.NewPCG(37, seed))
				cfg := fmConfig{
					maxEntries: b.entries,
					maxWeight:  b.weight,
					nkeys:      []int{4, 12, 40, 128}[r.IntN(4)],
					defaultTTL: ttls[r.IntN(3)],
					jitter:     jitters[r.IntN(3)],
					fixedRand:  r.IntN(2) == 0,
					hasher:     r.IntN(4),
					onEvict:    r.IntN(8) != 0,
					valueType:  vt,
					policy:     pol,
					initialCap: []int{0, 3, 1000}[r.IntN(3)],
				}
				if m := cfg.maxWeight; m > 0 {
					w := uint32(m)
					cfg.weights = [8]uint32{0, 1, 2, 3, w / 2, w, w + 1, math.MaxUint32}
				}
				t.Run(fmt.Sprintf("%d", seed), func(t *testing.T) {
					h := fmNewHarness(t, cfg)
					defer h.c.Close()
					data := make([]byte, 3000)
					for i := range data {
						data[i] = byte(r.Uint32())
					}
					rd := fmReader{data: data}
					for n := 0; rd.more(); n++ {
						h.step(&rd)
						if h.strict {
							h.checkLen(h.c.Len())
						}
						if (n+1)%fmBatch == 0 {
							h.check()
						}
					}
					h.finish()
				})
			}
		}
	}
}

// TestWideClockBackAndForth: random operations with a Clock that jumps
// both ways; every stored value is reported exactly once, Get/Peek/All
// never return a value expired by the clock, invariants hold, Stats add up.
func TestWideClockBackAndForth(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(99, seed))
		clk := newFakeClock()
		type rec struct {
			key      int
			deadline time.Time
			reported int
		}
		recs := map[int]*rec{}
		next := 1
		bounds := []struct {
			e int
			w uint64
		}{{0, 0}, {3, 0}, {8, 0}, {0, 5}}
		b := bounds[seed%4]
		pols := append([]string{""}, PolicyNames()...)
		opts := Options[int, int]{
			MaxEntries: b.e, MaxWeight: b.w, Clock: clk,
			DefaultTTL: []time.Duration{0, time.Millisecond}[r.IntN(2)],
			TTLJitter:  []float64{0, 0.5}[r.IntN(2)],
			OnEvict: func(k, v int, cause Cause) {
				rc := recs[v]
				if rc == nil || rc.key != k {
					t.Errorf("seed %d: OnEvict(%d, %d, %v): unknown", seed, k, v, cause)
					return
				}
				rc.reported++
				if rc.reported > 1 {
					t.Errorf("seed %d: OnEvict(%d, %d, %v): reported %d times", seed, k, v, cause, rc.reported)
				}
			},
		}
		if b.e > 0 || b.w > 0 {
			opts.Policy = pols[r.IntN(len(pols))]
		}
		if b.w > 0 {
			opts.Weigher = func(_, v int) uint32 { return uint32(v % 3) }
		}
		c := Must(opts)
		c.Close()
		stored := 0
		dl := func(k int) time.Time {
			d, ok := c.deadlineOf(k)
			if !ok || d == 0 {
				return time.Time{}
			}
			return c.c.start.Add(d)
		}
		live := func(v int, now time.Time) bool {
			rc := recs[v]
			return rc.deadline.IsZero() || rc.deadline.After(now)
		}
		for range 400 {
			k := r.IntN(10)
			switch r.IntN(10) {
			case 0, 1:
				v := next
				next++
				recs[v] = &rec{key: k}
				if c.Set(k, v) {
					stored++
					recs[v].deadline = dl(k)
				}
			case 2:
				v := next
				next++
				recs[v] = &rec{key: k}
				if c.SetWithTTL(k, v, time.Duration(r.IntN(3))*time.Millisecond) {
					stored++
					recs[v].deadline = dl(k)
				}
			case 3, 4:
				if v, ok := c.Get(k); ok && !live(v, clk.Now()) {
					t.Fatalf("seed %d: Get(%d) returned expired %d", seed, k, v)
				}
				if v, ok := c.Peek(k); ok && !live(v, clk.Now()) {
					t.Fatalf("seed %d: Peek(%d) returned expired %d", seed, k, v)
				}
			case 5:
				c.Delete(k)
			case 6:
				d := time.Duration(r.IntN(4)) * time.Millisecond / 2
				if r.IntN(3) == 0 {
					d = -d
				}
				clk.Advance(d)
			case 7:
				for k, v := range c.All() {
					if !live(v, clk.Now()) {
						t.Fatalf("seed %d: All yielded expired %d=%d", seed, k, v)
					}
				}
			case 8:
				c.settle()
			case 9:
				if r.IntN(10) == 0 {
					c.Clear()
				}
			}
			if err := c.checkInvariants(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		s := c.Stats()
		removed := s.Evicted + s.Expired + s.Deleted + s.Replaced + s.Cleared
		if s.Sets != uint64(stored) || s.Sets != removed+uint64(s.Entries) {
			t.Fatalf("seed %d: stored %d, Stats %+v", seed, stored, s)
		}
		c.Clear()
		for v, rc := range recs {
			if rc.reported > 1 {
				t.Fatalf("seed %d: value %d reported %d times", seed, v, rc.reported)
			}
		}
		n := 0
		for _, rc := range recs {
			n += rc.reported
		}
		if n != stored {
			t.Fatalf("seed %d: %d reports, %d stored", seed, n, stored)
		}
	}
}

// TestWideWeightedStress: random weights up to MaxWeight, many keys, every
// policy; the bound and bookkeeping hold after each settle.
func TestWideWeightedStress(t *testing.T) {
	for _, pol := range append([]string{""}, PolicyNames()...) {
		for _, mw := range []uint64{1, 2, 17, 1000} {
			r := rand.New(rand.NewPCG(uint64(mw), 5))
			clk := newFakeClock()
			c := Must(Options[int, uint64]{
				MaxWeight: mw, Policy: pol, Clock: clk,
				Weigher: func(_ int, v uint64) uint32 { return uint32(v % (mw + 1)) },
			})
			c.Close()
			for i := range 20000 {
				k := int(r.Uint64N(300))
				switch r.IntN(8) {
				case 0:
					c.Delete(k)
				case 1:
					c.SetWithTTL(k, r.Uint64(), time.Duration(r.IntN(5))*time.Millisecond)
				case 2:
					clk.Advance(time.Millisecond)
				case 3, 4:
					c.Get(k)
				default:
					c.Set(k, r.Uint64())
				}
				if i%500 == 0 {
					if err := c.checkInvariants(); err != nil {
						t.Fatalf("%q MaxWeight %d op %d: %v", pol, mw, i, err)
					}
					s := c.Stats()
					if s.Weight > mw {
						t.Fatalf("%q: weight %d > %d", pol, s.Weight, mw)
					}
					removed := s.Evicted + s.Expired + s.Deleted + s.Replaced + s.Cleared
					if s.Sets != removed+uint64(s.Entries) {
						t.Fatalf("%q: %+v", pol, s)
					}
				}
			}
		}
	}
}

// TestWideOnEvictNoLockHeld: single-threaded (closed cache), OnEvict never
// runs with the maintenance lock or a segment lock held.
func TestWideOnEvictNoLockHeld(t *testing.T) {
	for _, pol := range append([]string{""}, PolicyNames()...) {
		for _, bound := range []int{0, 4, 40} {
			r := rand.New(rand.NewPCG(uint64(bound), 9))
			clk := newFakeClock()
			var c *Cache[int, int]
			calls := 0
			opts := Options[int, int]{
				MaxEntries: bound, Clock: clk,
				OnEvict: func(k, v int, cause Cause) {
					calls++
					if !c.c.mu.TryLock() {
						t.Fatalf("%q %d: OnEvict(%d,%d,%v) with the maintenance lock held", pol, bound, k, v, cause)
					}
					c.c.mu.Unlock()
					for i := range c.c.segs {
						if !c.c.segs[i].mu.TryLock() {
							t.Fatalf("OnEvict with segment %d locked", i)
						}
						c.c.segs[i].mu.Unlock()
					}
				},
			}
			if bound > 0 {
				opts.Policy = pol
			} else if pol != "" {
				continue
			}
			c = Must(opts)
			c.Close()
			for range 5000 {
				k := r.IntN(60)
				switch r.IntN(10) {
				case 0:
					c.Delete(k)
				case 1:
					c.SetWithTTL(k, k, time.Duration(r.IntN(3))*time.Millisecond)
				case 2:
					clk.Advance(time.Millisecond)
				case 3:
					c.Get(k)
				case 4:
					if r.IntN(20) == 0 {
						c.Clear()
					}
				case 5:
					c.Stats()
				case 6:
					c.SetMany(map[int]int{k: 1, k + 1: 2})
				default:
					c.Set(k, r.Int())
				}
			}
			if calls == 0 {
				t.Fatal("no calls")
			}
		}
	}
}

// TestWideReentrantRandom: OnEvict writes to the cache itself; every stored
// value is still reported exactly once, and the bookkeeping holds.
func TestWideReentrantRandom(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 77))
		clk := newFakeClock()
		reported := map[int]int{}
		storedVals := map[int]bool{}
		next := 1
		depth := 0
		var c *Cache[int, int]
		pols := append([]string{""}, PolicyNames()...)
		bounds := []int{0, 1, 3, 20}
		b := bounds[seed%4]
		var do func()
		opts := Options[int, int]{
			MaxEntries: b, Clock: clk,
			OnEvict: func(k, v int, cause Cause) {
				reported[v]++
				if reported[v] > 1 {
					t.Fatalf("seed %d: value %d reported twice (%v)", seed, v, cause)
				}
				if !storedVals[v] {
					t.Fatalf("seed %d: value %d reported, never stored", seed, v)
				}
				if depth < 3 && r.IntN(2) == 0 {
					depth++
					do()
					depth--
				}
			},
		}
		if b > 0 {
			opts.Policy = pols[r.IntN(len(pols))]
		}
		c = Must(opts)
		c.Close()
		do = func() {
			k := r.IntN(8)
			switch r.IntN(9) {
			case 0:
				c.Delete(k)
			case 1, 2:
				v := next
				next++
				storedVals[v] = true
				c.SetWithTTL(k, v, time.Duration(r.IntN(3))*time.Millisecond)
			case 3:
				clk.Advance(time.Millisecond)
			case 4:
				c.Get(k)
			case 5:
				if r.IntN(5) == 0 {
					c.Clear()
				}
			case 6:
				c.Stats()
			default:
				v := next
				next++
				storedVals[v] = true
				c.Set(k, v)
			}
		}
		for range 300 {
			do()
		}
		if err := c.checkInvariants(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		s := c.Stats()
		removed := s.Evicted + s.Expired + s.Deleted + s.Replaced + s.Cleared
		if s.Sets != removed+uint64(s.Entries) || s.Sets != uint64(len(storedVals)) {
			t.Fatalf("seed %d: stored %d, %+v", seed, len(storedVals), s)
		}
		depth = 99
		c.Clear()
		for v := range storedVals {
			if reported[v] != 1 {
				t.Fatalf("seed %d: value %d reported %d times", seed, v, reported[v])
			}
		}
	}
}
