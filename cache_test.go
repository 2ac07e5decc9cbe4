package cachekit

// Behaviour tests of Cache: options, forced hash collisions, TTL boundaries
// and jitter, reclaim of expired entries without reads, capacity bounds,
// the OnEvict listener, Clear and Delete under concurrency, Close and the
// GC cleanup, statistics, allocations and benchmarks.
//
// Every randomised test logs its seed; set CACHEKIT_TEST_SEED to replay one.
// Time is a fakeClock (Options.Clock) or a testing/synctest bubble; real
// timeouts only guard against deadlocks.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
	"weak"

	"github.com/cachekit/cachekit/internal/buffer"
	"github.com/cachekit/cachekit/internal/leaktest"
)

// ---------------------------------------------------------------------------
// Helpers (prefixed ct to keep clear of other test files of the package).

// ctNew returns a new cache that is closed when the test ends.
func ctNew[K comparable, V any](t testing.TB, opts Options[K, V]) *Cache[K, V] {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// ctPinned keeps the handles of caches created in synctest bubbles
// reachable for the rest of the process, so that their GC cleanup never
// runs. A cleanup that touches a bubble's channels from outside the bubble
// is a fatal error that kills the whole test binary; cachekit had that bug
// (the cleanup received from done and Close did not cancel it), and
// TestSynctestCacheCollectedAfterClose checks for it in a child process.
var ctPinned struct {
	sync.Mutex
	caches []any
}

func ctPin(c any) {
	ctPinned.Lock()
	ctPinned.caches = append(ctPinned.caches, c)
	ctPinned.Unlock()
}

// ctRand returns a generator seeded from math/rand/v2, or from
// CACHEKIT_TEST_SEED, and logs the seed.
func ctRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv("CACHEKIT_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CACHEKIT_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with CACHEKIT_TEST_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0x63616368656b6974))
}

func ctInvariants[K comparable, V any](t testing.TB, c *Cache[K, V]) {
	t.Helper()
	if err := c.checkInvariants(); err != nil {
		t.Fatalf("checkInvariants: %v", err)
	}
}

// ctSegmentsInUse returns the number of index segments holding an entry.
func ctSegmentsInUse[K comparable, V any](c *Cache[K, V]) int {
	n := 0
	for i := range c.c.segs {
		if c.c.segs[i].live.Load() > 0 {
			n++
		}
	}
	return n
}

// ctAllMap collects All into a map, failing on a key yielded twice.
func ctAllMap[K comparable, V any](t testing.TB, c *Cache[K, V]) map[K]V {
	t.Helper()
	m := make(map[K]V)
	for k, v := range c.All() {
		if _, dup := m[k]; dup {
			t.Errorf("All yielded key %v twice", k)
		}
		m[k] = v
	}
	return m
}

// ctExpect checks key on every read path (Get, Peek, GetMany, All): it must
// be visible with value want, or absent on all of them.
func ctExpect[K comparable, V comparable](t testing.TB, c *Cache[K, V], key K, want V, visible bool, when string) {
	t.Helper()
	if v, ok := c.Get(key); ok != visible || (ok && v != want) {
		t.Errorf("%s: Get(%v) = %v, %v; want present=%v (value %v)", when, key, v, ok, visible, want)
	}
	if v, ok := c.Peek(key); ok != visible || (ok && v != want) {
		t.Errorf("%s: Peek(%v) = %v, %v; want present=%v (value %v)", when, key, v, ok, visible, want)
	}
	found, missing := c.GetMany([]K{key})
	if v, ok := found[key]; ok != visible || (ok && v != want) || len(found)+len(missing) != 1 {
		t.Errorf("%s: GetMany([%v]) = %v, missing %v; want present=%v (value %v)", when, key, found, missing, visible, want)
	}
	seen := 0
	for k, v := range c.All() {
		if k != key {
			continue
		}
		seen++
		if v != want {
			t.Errorf("%s: All yielded %v=%v, want %v", when, k, v, want)
		}
	}
	if (seen == 1) != visible || seen > 1 {
		t.Errorf("%s: All yielded %v %d times, want present=%v", when, key, seen, visible)
	}
}

// ctWithin runs fn on its own goroutine and fails the test if it has not
// returned within limit (a deadlock guard, not a timing assertion).
func ctWithin(t *testing.T, limit time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s did not finish within %v (deadlock?); goroutines:\n%s", what, limit, buf)
	}
}

// ctCauses counts OnEvict calls by cause.
type ctCauses struct {
	n [numCauses]atomic.Int64
}

func (c *ctCauses) total() int64 {
	var s int64
	for i := range c.n {
		s += c.n[i].Load()
	}
	return s
}

func (c *ctCauses) String() string {
	var b strings.Builder
	for i := range c.n {
		fmt.Fprintf(&b, "%v=%d ", Cause(i), c.n[i].Load())
	}
	return strings.TrimSpace(b.String())
}

// ---------------------------------------------------------------------------
// 1. Options validation.

func TestOptionsInvalid(t *testing.T) {
	weigh := func(int, string) uint32 { return 1 }
	cases := []struct {
		name    string
		opts    Options[int, string]
		mention string // the option the message must name
	}{
		{"MaxEntries negative", Options[int, string]{MaxEntries: -1}, "MaxEntries"},
		{"MaxEntries MinInt", Options[int, string]{MaxEntries: math.MinInt}, "MaxEntries"},
		{"MaxEntries and MaxWeight", Options[int, string]{MaxEntries: 10, MaxWeight: 10, Weigher: weigh}, "MaxWeight"},
		{"MaxEntries and MaxWeight without Weigher", Options[int, string]{MaxEntries: 10, MaxWeight: 10}, "MaxWeight"},
		{"MaxWeight without Weigher", Options[int, string]{MaxWeight: 10}, "Weigher"},
		{"Weigher without bound", Options[int, string]{Weigher: weigh}, "Weigher"},
		{"Weigher with MaxEntries", Options[int, string]{MaxEntries: 10, Weigher: weigh}, "Weigher"},
		{"DefaultTTL negative", Options[int, string]{DefaultTTL: -time.Nanosecond}, "DefaultTTL"},
		{"DefaultTTL MinInt64", Options[int, string]{DefaultTTL: math.MinInt64}, "DefaultTTL"},
		{"TTLJitter negative", Options[int, string]{TTLJitter: -0.01}, "TTLJitter"},
		{"TTLJitter negative zero-ish", Options[int, string]{TTLJitter: -math.SmallestNonzeroFloat64}, "TTLJitter"},
		{"TTLJitter one", Options[int, string]{TTLJitter: 1}, "TTLJitter"},
		{"TTLJitter above one", Options[int, string]{TTLJitter: 2.5}, "TTLJitter"},
		{"TTLJitter NaN", Options[int, string]{TTLJitter: math.NaN()}, "TTLJitter"},
		{"TTLJitter +Inf", Options[int, string]{TTLJitter: math.Inf(1)}, "TTLJitter"},
		{"TTLJitter -Inf", Options[int, string]{TTLJitter: math.Inf(-1)}, "TTLJitter"},
		{"InitialCapacity negative", Options[int, string]{InitialCapacity: -1}, "InitialCapacity"},
		{"several invalid", Options[int, string]{MaxEntries: -1, DefaultTTL: -1, TTLJitter: 3, InitialCapacity: -1}, ""},
		{"one invalid among valid", Options[int, string]{
			MaxEntries: 100, DefaultTTL: time.Minute, TTLJitter: 1, InitialCapacity: 10,
			OnEvict: func(int, string, Cause) {}, Clock: newFakeClock(),
		}, "TTLJitter"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.opts)
			if err == nil {
				c.Close()
				t.Fatalf("New accepted invalid options %+v", tc.opts)
			}
			if c != nil {
				t.Errorf("New returned a cache with error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "cachekit:") {
				t.Errorf("error %q does not start with %q", err, "cachekit:")
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("errors.Is(%q, ErrInvalidOptions) = false", err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q does not name the option %s", err, tc.mention)
			}

			m, p := ctMustRecover(tc.opts)
			if p == nil {
				m.Close()
				t.Fatal("Must did not panic on invalid options")
			}
			perr, ok := p.(error)
			if !ok {
				t.Fatalf("Must panicked with %T %v, want an error", p, p)
			}
			if !errors.Is(perr, ErrInvalidOptions) || !strings.HasPrefix(perr.Error(), "cachekit:") {
				t.Errorf("Must panicked with %q, want an error wrapping ErrInvalidOptions starting with cachekit:", perr)
			}
		})
	}
	if !strings.HasPrefix(ErrInvalidOptions.Error(), "cachekit:") {
		t.Errorf("ErrInvalidOptions = %q, want the cachekit: prefix", ErrInvalidOptions)
	}
}

func ctMustRecover[K comparable, V any](opts Options[K, V]) (c *Cache[K, V], p any) {
	defer func() { p = recover() }()
	return Must(opts), nil
}

func TestOptionsValid(t *testing.T) {
	weigh := func(_ int, v string) uint32 { return uint32(len(v)) }
	cases := []struct {
		name string
		opts Options[int, string]
	}{
		{"zero", Options[int, string]{}},
		{"MaxEntries 1", Options[int, string]{MaxEntries: 1}},
		{"MaxWeight with Weigher", Options[int, string]{MaxWeight: 1, Weigher: weigh}},
		// A fake clock: with a real one the entry may expire before Get.
		{"DefaultTTL 1ns", Options[int, string]{DefaultTTL: 1, Clock: newFakeClock()}},
		{"TTLJitter just below 1", Options[int, string]{TTLJitter: math.Nextafter(1, 0)}},
		{"TTLJitter without TTL", Options[int, string]{TTLJitter: 0.5}},
		{"InitialCapacity above MaxEntries", Options[int, string]{MaxEntries: 10, InitialCapacity: 1 << 16}},
		{"everything", Options[int, string]{
			MaxWeight: 1 << 20, Weigher: weigh, DefaultTTL: time.Hour, TTLJitter: 0.2,
			InitialCapacity: 100, OnEvict: func(int, string, Cause) {}, Clock: newFakeClock(),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.opts)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer c.Close()
			if !c.Set(1, "x") {
				t.Fatal("Set refused a light entry")
			}
			if v, ok := c.Get(1); !ok || v != "x" {
				t.Fatalf("Get(1) = %q, %v", v, ok)
			}
			m, p := ctMustRecover(tc.opts)
			if p != nil {
				t.Fatalf("Must panicked on valid options: %v", p)
			}
			m.Close()
		})
	}
}

// ---------------------------------------------------------------------------
// 2. Forced hash collisions.

type ctHasher struct {
	name     string
	fn       func(int) uint64
	segments int // the number of segments the keys may use
}

func ctHashers() []ctHasher {
	return []ctHasher{
		// Zero: every key has the first slot of its table.
		{"constant zero", func(int) uint64 { return 0 }, 1},
		{"constant", func(int) uint64 { return 0x9e3779b97f4a7c15 }, 1},
		{"two values two segments", func(k int) uint64 {
			if k&1 == 0 {
				return 0x0000000000000123
			}
			return 0xf000000000000123
		}, 2},
		{"two values one segment", func(k int) uint64 {
			if k&1 == 0 {
				return 0x0123456789abcdef
			}
			return 0x0123456789abcdee
		}, 1},
	}
}

func TestCollisionsSequential(t *testing.T) {
	const n = 400
	enc := func(k, gen int) int { return k<<4 | gen }
	for _, hs := range ctHashers() {
		for _, bound := range []int{0, 1 << 20} {
			t.Run(fmt.Sprintf("%s/MaxEntries=%d", hs.name, bound), func(t *testing.T) {
				c := ctNew(t, Options[int, int]{MaxEntries: bound})
				c.setHasher(hs.fn)
				check := func(when string, gen func(k int) int) {
					t.Helper()
					for k := range n {
						g := gen(k)
						v, ok := c.Get(k)
						if g == 0 {
							if ok {
								t.Fatalf("%s: Get(%d) = %d, want a miss", when, k, v)
							}
							continue
						}
						if !ok || v != enc(k, g) {
							t.Fatalf("%s: Get(%d) = %d, %v; want %d", when, k, v, ok, enc(k, g))
						}
						if p, ok := c.Peek(k); !ok || p != v {
							t.Fatalf("%s: Peek(%d) = %d, %v; want %d", when, k, p, ok, v)
						}
					}
					all := ctAllMap(t, c)
					live := 0
					for k := range n {
						if g := gen(k); g != 0 {
							live++
							if all[k] != enc(k, g) {
								t.Fatalf("%s: All gave %d=%d, want %d", when, k, all[k], enc(k, g))
							}
						}
					}
					if len(all) != live || c.Len() != live {
						t.Fatalf("%s: All has %d entries, Len %d, want %d", when, len(all), c.Len(), live)
					}
					ctInvariants(t, c)
				}

				for k := range n {
					if !c.Set(k, enc(k, 1)) {
						t.Fatalf("Set(%d) refused", k)
					}
				}
				if got := ctSegmentsInUse(c); got > hs.segments {
					t.Fatalf("keys spread over %d segments, the forced hash allows %d: setHasher had no effect", got, hs.segments)
				}
				check("after insert", func(int) int { return 1 })

				keys := make([]int, 0, n+10)
				for k := range n + 10 {
					keys = append(keys, k)
				}
				found, missing := c.GetMany(keys)
				if len(found) != n || !slices.Equal(missing, keys[n:]) {
					t.Fatalf("GetMany: %d found, missing %v; want %d found, missing %v", len(found), missing, n, keys[n:])
				}
				for k, v := range found {
					if v != enc(k, 1) {
						t.Fatalf("GetMany gave %d=%d, want %d", k, v, enc(k, 1))
					}
				}

				for k := 1; k < n; k += 2 {
					c.Delete(k)
				}
				check("after deleting odd keys", func(k int) int { return 1 - k&1 })
				for k := 1; k < n; k += 2 {
					c.Set(k, enc(k, 2))
				}
				for k := 0; k < n; k += 2 {
					c.Set(k, enc(k, 3))
				}
				check("after re-inserting and replacing", func(k int) int { return 3 - k&1 })
				for k := range n {
					c.Delete(k)
				}
				check("after deleting all", func(int) int { return 0 })
				for k := n - 1; k >= 0; k-- {
					c.Set(k, enc(k, 4))
				}
				check("after refilling", func(int) int { return 4 })
			})
		}
	}
}

// With eviction, entries may be missing, but a Get that hits must return
// the key's own value.
func TestCollisionsBoundedEviction(t *testing.T) {
	for _, hs := range ctHashers() {
		t.Run(hs.name, func(t *testing.T) {
			const max, n = 64, 1000
			c := ctNew(t, Options[int, int]{MaxEntries: max})
			c.setHasher(hs.fn)
			for round := range 3 {
				for k := range n {
					c.Set(k, k*10+round)
					if v, ok := c.Get(k / 2); ok && v/10 != k/2 {
						t.Fatalf("Get(%d) returned %d, a value of key %d", k/2, v, v/10)
					}
				}
				c.settle()
				if l := c.Len(); l > max || l == 0 {
					t.Fatalf("round %d: Len = %d after settle, want 1..%d", round, l, max)
				}
				for k, v := range c.All() {
					if v/10 != k {
						t.Fatalf("All yielded %d=%d, a value of key %d", k, v, v/10)
					}
				}
				ctInvariants(t, c)
			}
			for k := range n {
				c.Delete(k)
				if v, ok := c.Get(k); ok {
					t.Fatalf("Get(%d) = %d after Delete", k, v)
				}
			}
			if c.Len() != 0 {
				t.Fatalf("Len = %d after deleting every key", c.Len())
			}
			ctInvariants(t, c)
		})
	}
}

// Removals in a long probe run empty their slots or mark them deleted
// (table.go), and inserts reuse them; readers racing with both must still
// find every key that stays in the cache. All keys share one hash, so they
// form one long run of groups; round r removes and re-inserts key group
// r%3, so the two other key groups stay in the cache all round while the
// slots before and among them change. A reader reads a key of group
// (r+2)%3 and checks, after its Get, that the writer has not reached round
// r+2 (which removes that group).
func TestIndexRemovalsUnderReaders(t *testing.T) {
	const group, readers, rounds = 100, 3, 200
	c := ctNew(t, Options[int, int]{})
	c.setHasher(func(int) uint64 { return 0 })
	for k := range 3 * group {
		c.Set(k, -k) // group k/group, in order
	}
	var round atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				r0 := round.Load()
				k := int((r0+2)%3)*group + (i*7+r)%group
				v, ok := c.Get(k)
				if round.Load() >= r0+2 {
					continue // the key may have been removed meanwhile
				}
				if !ok || v != -k {
					errs <- fmt.Sprintf("round %d: Get(%d) = %d, %v while other keys were removed", r0, k, v, ok)
					return
				}
			}
		}()
	}
	for r := range int64(rounds) {
		round.Store(r)
		g := int(r % 3)
		for k := g * group; k < (g+1)*group; k++ {
			c.Delete(k)
		}
		for k := g * group; k < (g+1)*group; k++ {
			c.Set(k, -k)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	ctInvariants(t, c)
}

// Concurrent goroutines over colliding keys: each owns a key range (so it
// knows exactly what Get must return) and also reads and writes shared keys
// (whose values must at least belong to the key read).
func TestCollisionsConcurrent(t *testing.T) {
	rng := ctRand(t)
	const (
		workers = 4
		owned   = 100
		shared  = 200
		ops     = 1500
	)
	enc := func(k, gen int) int { return k<<16 | gen&0xffff }
	for _, hs := range ctHashers()[1:3] {
		for _, bound := range []int{0, 1 << 20} {
			t.Run(fmt.Sprintf("%s/MaxEntries=%d", hs.name, bound), func(t *testing.T) {
				c := ctNew(t, Options[int, int]{MaxEntries: bound})
				c.setHasher(hs.fn)
				var wg sync.WaitGroup
				for w := range workers {
					seed := rng.Uint64()
					wg.Go(func() {
						r := rand.New(rand.NewPCG(seed, uint64(w)))
						base := 1000 * (w + 1)
						last := make(map[int]int) // owned key -> value, absent if deleted
						gen := 0
						for range ops {
							k := base + r.IntN(owned)
							s := 10000 + r.IntN(shared)
							switch op := r.IntN(10); {
							case op < 4:
								gen++
								c.Set(k, enc(k, gen))
								last[k] = enc(k, gen)
							case op < 5:
								c.Delete(k)
								delete(last, k)
							case op < 7:
								want, present := last[k]
								if v, ok := c.Get(k); ok != present || v != want {
									t.Errorf("worker %d: Get(%d) = %d, %v; want %d, %v", w, k, v, ok, want, present)
									return
								}
							case op < 8:
								c.Set(s, enc(s, w))
							default:
								if v, ok := c.Get(s); ok && v>>16 != s {
									t.Errorf("worker %d: Get(%d) returned %d, a value of key %d", w, s, v, v>>16)
									return
								}
							}
						}
						for k := base; k < base+owned; k++ {
							want, present := last[k]
							if v, ok := c.Get(k); ok != present || v != want {
								t.Errorf("worker %d: final Get(%d) = %d, %v; want %d, %v", w, k, v, ok, want, present)
							}
						}
					})
				}
				wg.Wait()
				ctInvariants(t, c)
			})
		}
	}
}

// ---------------------------------------------------------------------------
// 3. TTL boundaries and jitter (fake clock).

func TestTTLBoundary(t *testing.T) {
	const ttl = 1500 * time.Millisecond
	type writer func(c *Cache[string, int], k string, v int) bool
	modes := []struct {
		name       string
		defaultTTL time.Duration
		write      writer
	}{
		{"SetWithTTL", 0, func(c *Cache[string, int], k string, v int) bool { return c.SetWithTTL(k, v, ttl) }},
		{"SetWithTTL overrides DefaultTTL", time.Hour, func(c *Cache[string, int], k string, v int) bool { return c.SetWithTTL(k, v, ttl) }},
		{"DefaultTTL Set", ttl, func(c *Cache[string, int], k string, v int) bool { return c.Set(k, v) }},
		{"DefaultTTL SetMany", ttl, func(c *Cache[string, int], k string, v int) bool {
			return c.SetMany(map[string]int{k: v}) == 1
		}},
	}
	for _, m := range modes {
		for _, bound := range []int{0, 100} {
			t.Run(fmt.Sprintf("%s/MaxEntries=%d", m.name, bound), func(t *testing.T) {
				clk := newFakeClock()
				var mu sync.Mutex
				var removals []string
				c := ctNew(t, Options[string, int]{
					MaxEntries: bound, DefaultTTL: m.defaultTTL, Clock: clk,
					OnEvict: func(k string, v int, cause Cause) {
						mu.Lock()
						removals = append(removals, fmt.Sprintf("%s=%d:%v", k, v, cause))
						mu.Unlock()
					},
				})
				write := func(k string, v int) {
					t.Helper()
					if !m.write(c, k, v) {
						t.Fatalf("writing %s=%d failed", k, v)
					}
				}
				clk.Advance(12345 * time.Microsecond) // not at the cache's time zero
				write("k", 1)
				c.SetWithTTL("zero", 2, 0)
				c.SetWithTTL("negative", 3, -time.Second)

				clk.Advance(ttl - 1)
				ctExpect(t, c, "k", 1, true, "at ttl-1ns")
				clk.Advance(1)
				ctExpect(t, c, "k", 1, false, "at ttl")
				clk.Advance(time.Hour)
				ctExpect(t, c, "k", 1, false, "at ttl+1h")

				// A rewrite starts a new TTL from the time of the rewrite.
				write("r", 1)
				clk.Advance(ttl / 2)
				write("r", 2)
				clk.Advance(ttl / 2)
				ctExpect(t, c, "r", 2, true, "rewrite, at first write+ttl")
				clk.Advance(ttl/2 - 1)
				ctExpect(t, c, "r", 2, true, "rewrite, at rewrite+ttl-1ns")
				clk.Advance(1)
				ctExpect(t, c, "r", 2, false, "rewrite, at rewrite+ttl")

				c.settle()
				if l := c.Len(); l != 2 {
					t.Errorf("Len = %d after settle, want 2 (the entries without TTL)", l)
				}
				if s := c.Stats(); s.Expired != 2 || s.Replaced != 1 {
					t.Errorf("Stats: Expired %d, Replaced %d; want 2, 1", s.Expired, s.Replaced)
				}
				mu.Lock()
				got := slices.Clone(removals)
				mu.Unlock()
				slices.Sort(got)
				want := []string{"k=1:expired", "r=1:replaced", "r=2:expired"}
				if !slices.Equal(got, want) {
					t.Errorf("OnEvict calls %v, want %v", got, want)
				}

				// A TTL of zero or less never expires, even with a DefaultTTL.
				clk.Advance(100 * 365 * 24 * time.Hour)
				c.settle()
				ctExpect(t, c, "zero", 2, true, "ttl 0 after 100 years")
				ctExpect(t, c, "negative", 3, true, "negative ttl after 100 years")
				for _, k := range []string{"zero", "negative"} {
					if d, ok := c.deadlineOf(k); !ok || d != 0 {
						t.Errorf("deadlineOf(%q) = %v, %v; want 0 (no expiry)", k, d, ok)
					}
				}
				ctInvariants(t, c)
			})
		}
	}
}

// A huge TTL (time.Duration(math.MaxInt64) is a common "forever") must not
// make the entry expire at once: the deadline must saturate, not overflow.
func TestTTLHuge(t *testing.T) {
	for _, ttl := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, 250 * 365 * 24 * time.Hour} {
		for _, jitter := range []float64{0, 0.1} {
			for _, viaDefault := range []bool{false, true} {
				t.Run(fmt.Sprintf("ttl=%v/jitter=%v/DefaultTTL=%v", ttl, jitter, viaDefault), func(t *testing.T) {
					clk := newFakeClock()
					opts := Options[int, int]{Clock: clk, TTLJitter: jitter}
					if viaDefault {
						opts.DefaultTTL = ttl
					}
					c := ctNew(t, opts)
					if jitter > 0 {
						// Deterministic: stretch the TTL by 2.5%.
						c.setRandom(func() float64 { return 0.75 })
					}
					clk.Advance(time.Hour)
					if viaDefault {
						c.Set(1, 1)
					} else {
						c.SetWithTTL(1, 1, ttl)
					}
					d, _ := c.deadlineOf(1)
					ctExpect(t, c, 1, 1, true, fmt.Sprintf("right after the write (deadline %d)", int64(d)))
					clk.Advance(24 * time.Hour)
					c.settle()
					ctExpect(t, c, 1, 1, true, "a day after the write")
				})
			}
		}
	}
}

func TestTTLJitterBand(t *testing.T) {
	const (
		n      = 10000
		ttl    = 10 * time.Second
		jitter = 0.1
		offset = 3 * time.Second // the clock's distance from the cache's time zero when writing
	)
	lo, hi := ttl-ttl/20, ttl+ttl/20 // ttl*(1±0.05)

	// deadlines writes n entries at the same instant and returns their TTLs
	// as applied (deadline minus write time), checking that expiry follows
	// them exactly.
	deadlines := func(t *testing.T, random func() float64, viaDefault bool) []time.Duration {
		clk := newFakeClock()
		opts := Options[int, int]{Clock: clk, TTLJitter: jitter}
		if viaDefault {
			opts.DefaultTTL = ttl
		}
		c := ctNew(t, opts)
		if random != nil {
			c.setRandom(random)
		}
		clk.Advance(offset)
		for k := range n {
			if viaDefault {
				c.Set(k, k)
			} else {
				c.SetWithTTL(k, k, ttl)
			}
		}
		ds := make([]time.Duration, n)
		for k := range n {
			d, ok := c.deadlineOf(k)
			if !ok {
				t.Fatalf("entry %d missing", k)
			}
			ds[k] = d - offset
		}
		// Expiry follows each entry's own deadline, to the nanosecond.
		elapsed := time.Duration(0)
		for _, at := range []time.Duration{lo - 2, ttl - 1, ttl, ttl + ttl/40, hi} {
			clk.Advance(at - elapsed)
			elapsed = at
			want, got := 0, 0
			for k := range n {
				if ds[k] > at {
					want++
				}
				if _, ok := c.Peek(k); ok {
					got++
				}
			}
			if got != want {
				t.Errorf("at write+%v: %d entries visible, %d have a later deadline", at, got, want)
			}
		}
		return ds
	}
	checkBand := func(t *testing.T, ds []time.Duration) {
		t.Helper()
		distinct := make(map[time.Duration]bool)
		var sum float64
		for _, d := range ds {
			if d < lo-1 || d > hi {
				t.Fatalf("TTL applied %v outside %v..%v", d, lo, hi)
			}
			distinct[d] = true
			sum += float64(d)
		}
		mn, mx := slices.Min(ds), slices.Max(ds)
		mean := time.Duration(sum / float64(len(ds)))
		t.Logf("%d distinct TTLs, min %v, max %v, mean %v", len(distinct), mn, mx, mean)
		if len(distinct) < 100 {
			t.Errorf("only %d distinct deadlines among %d entries: jitter does not spread", len(distinct), len(ds))
		}
		if mn > lo+ttl/100 || mx < hi-ttl/100 {
			t.Errorf("TTLs span %v..%v, want close to the band edges %v..%v", mn, mx, lo, hi)
		}
		if mean < ttl-ttl/100 || mean > ttl+ttl/100 {
			t.Errorf("mean TTL %v, want about %v", mean, ttl)
		}
	}

	t.Run("seeded", func(t *testing.T) {
		seed := ctRand(t).Uint64()
		src := func() func() float64 {
			r := rand.New(rand.NewPCG(seed, 1))
			return r.Float64
		}
		ds := deadlines(t, src(), false)
		checkBand(t, ds)
		// The hook is what drives the jitter: the same seed gives the same
		// deadlines again.
		again := deadlines(t, src(), false)
		if !slices.Equal(ds, again) {
			t.Errorf("the same random sequence gave different deadlines")
		}
	})
	t.Run("band edges", func(t *testing.T) {
		var i int
		edges := func() float64 {
			i++
			if i%2 == 0 {
				return 0
			}
			return math.Nextafter(1, 0)
		}
		ds := deadlines(t, edges, false)
		mn, mx := slices.Min(ds), slices.Max(ds)
		if mn < lo-1 || mn > lo || mx > hi || mx < hi-1000 {
			t.Errorf("extreme random values gave TTLs %v..%v, want %v..%v", mn, mx, lo, hi)
		}
	})
	t.Run("default source SetWithTTL", func(t *testing.T) {
		checkBand(t, deadlines(t, nil, false))
	})
	t.Run("default source DefaultTTL", func(t *testing.T) {
		checkBand(t, deadlines(t, nil, true))
	})
}

// ---------------------------------------------------------------------------
// 4. Expired entries are reclaimed without reads.

func TestExpiryReclaimedWithoutReads(t *testing.T) {
	const n, keep = 10000, 10 // more than one maintenance pass's wheel budget
	cases := []struct {
		name     string
		opts     Options[int, int]
		min, max time.Duration // the TTL band
		write    func(c *Cache[int, int], k int)
	}{
		{"SetWithTTL unbounded", Options[int, int]{}, time.Second, time.Second + n*time.Microsecond,
			func(c *Cache[int, int], k int) { c.SetWithTTL(k, k, time.Second+time.Duration(k)*time.Microsecond) }},
		{"DefaultTTL bounded", Options[int, int]{MaxEntries: 2 * n, DefaultTTL: time.Second}, time.Second, time.Second,
			func(c *Cache[int, int], k int) { c.Set(k, k) }},
		{"DefaultTTL jitter", Options[int, int]{DefaultTTL: 2 * time.Second, TTLJitter: 0.5}, 1500 * time.Millisecond, 2500 * time.Millisecond,
			func(c *Cache[int, int], k int) { c.Set(k, k) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var causes ctCauses
				opts := tc.opts
				opts.OnEvict = func(_, _ int, cause Cause) { causes.n[cause].Add(1) }
				c := ctNew(t, opts)
				ctPin(c)
				for k := range n {
					tc.write(c, k)
				}
				for k := n; k < n+keep; k++ {
					c.SetWithTTL(k, k, 0)
				}

				time.Sleep(tc.min - time.Millisecond)
				synctest.Wait()
				if l, e := c.Len(), causes.total(); l != n+keep || e != 0 {
					t.Fatalf("just before the TTL: Len %d, %d removals (%v); want %d, 0", l, e, &causes, n+keep)
				}

				time.Sleep(tc.max - tc.min + time.Millisecond + 2*time.Second)
				synctest.Wait()
				// No Get, Peek or Stats before these checks: only the
				// background goroutine has run maintenance.
				if l, w := c.Len(), c.wheelLen(); l != keep || w != 0 {
					t.Errorf("2s after the TTL, without reads: Len %d, wheel %d; want %d, 0", l, w, keep)
				}
				if e := causes.n[CauseExpired].Load(); e != n || causes.total() != n {
					t.Errorf("OnEvict calls: %v; want expired=%d only", &causes, n)
				}
				s := c.Stats()
				if s.Expired != n || s.Evicted != 0 || s.Entries != keep {
					t.Errorf("Stats: %+v; want Expired %d, Evicted 0, Entries %d", s, n, keep)
				}
				ctInvariants(t, c)
				c.Close()
				select {
				case <-c.c.done:
				default:
					t.Error("the background goroutine is still running after Close")
				}
			})
		})
	}
}

// Churn with a fake clock: rounds of fresh keys with short TTLs, 20 times
// as many keys as the cache holds at once. Len, the index's slots and the
// timer wheel must stay under bounds that depend on the live entries only.
func TestChurnPlateauFakeClock(t *testing.T) {
	rng := ctRand(t)
	cases := []struct {
		name             string
		maxEntries       int
		perRound, rounds int
	}{
		{"unbounded", 0, 500, 20},
		{"bounded by expiry", 1000, 500, 20},
		{"bounded by capacity", 300, 500, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			c := ctNew(t, Options[int, int]{Clock: clk, MaxEntries: tc.maxEntries})
			live := tc.perRound // the most entries live after settling
			if tc.maxEntries > 0 {
				live = min(live, tc.maxEntries)
			}
			nseg := len(c.c.segs)
			// A segment's table is rebuilt for its live entries when used
			// slots pass 3/4: at most 4*(live+1) slots, at least 8.
			slotBound := 8*(2*tc.perRound) + 16*nseg
			var slots []int
			for r := range tc.rounds {
				for i := range tc.perRound {
					k := r*tc.perRound + i
					c.SetWithTTL(k, k, 100*time.Millisecond+time.Duration(rng.IntN(50))*time.Millisecond)
				}
				// Before settling: writes ran maintenance, which expired the
				// previous round (all due before this round began).
				if l, w, s := c.Len(), c.wheelLen(), c.indexSlots(); l > 2*tc.perRound || w > 2*tc.perRound || s > slotBound {
					t.Fatalf("round %d before settle: Len %d, wheel %d, slots %d; bounds %d, %d, %d",
						r, l, w, s, 2*tc.perRound, 2*tc.perRound, slotBound)
				}
				c.settle()
				l, w, s := c.Len(), c.wheelLen(), c.indexSlots()
				slots = append(slots, s)
				if l != live || w != l || s > slotBound {
					t.Fatalf("round %d after settle: Len %d, wheel %d, slots %d; want Len %d, wheel = Len, slots <= %d",
						r, l, w, s, live, slotBound)
				}
				if r%5 == 4 {
					ctInvariants(t, c)
				}
				clk.Advance(200 * time.Millisecond) // this round is now due
			}
			t.Logf("index slots per round: %v (bound %d, %d segments)", slots, slotBound, nseg)
			// Plateau: the second half never needs more slots than twice the
			// first half's peak.
			half := len(slots) / 2
			if a, b := slices.Max(slots[:half]), slices.Max(slots[half:]); b > 2*a {
				t.Errorf("index slots grow with rounds: peak %d in the first half, %d in the second", a, b)
			}
			c.settle()
			if l, w := c.Len(), c.wheelLen(); l != 0 || w != 0 {
				t.Errorf("after the last round expired: Len %d, wheel %d", l, w)
			}
			ctInvariants(t, c)
		})
	}
}

// The same churn with the real (bubbled) clock and no reads and no settle:
// only the background goroutine and the writes run maintenance.
func TestChurnPlateauSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const perRound, rounds = 500, 20
		c := ctNew(t, Options[int, int]{})
		ctPin(c)
		nseg := len(c.c.segs)
		slotBound := 8*perRound + 16*nseg
		for r := range rounds {
			for i := range perRound {
				k := r*perRound + i
				c.SetWithTTL(k, k, 100*time.Millisecond)
			}
			if l, w, s := c.Len(), c.wheelLen(), c.indexSlots(); l > perRound || w > perRound || s > slotBound {
				t.Fatalf("round %d: Len %d, wheel %d, slots %d; bounds %d, %d, %d", r, l, w, s, perRound, perRound, slotBound)
			}
			// Maintenance runs at least once a second: 1.5s later the round
			// has expired and been reclaimed.
			time.Sleep(1500 * time.Millisecond)
			synctest.Wait()
			if l, w := c.Len(), c.wheelLen(); l != 0 || w != 0 {
				t.Fatalf("round %d, 1.4s after expiry: Len %d, wheel %d; want 0, 0", r, l, w)
			}
		}
		ctInvariants(t, c)
		c.Close()
	})
}

// ---------------------------------------------------------------------------
// 5. Capacity.

func TestCapacitySequential(t *testing.T) {
	const max = 1000
	c := ctNew(t, Options[int, int]{MaxEntries: max})
	for k := range 10 * max {
		c.Set(k, k)
	}
	c.settle()
	s := c.Stats()
	// Writes from one goroutine: the policy evicts exactly down to the bound.
	if l := c.Len(); l != max || s.Entries != max || s.Weight != max {
		t.Errorf("Len %d, Stats.Entries %d, Stats.Weight %d; want all %d", l, s.Entries, s.Weight, max)
	}
	if s.Evicted != 9*max {
		t.Errorf("Stats.Evicted = %d, want %d", s.Evicted, 9*max)
	}
	for k, v := range c.All() {
		if k != v {
			t.Fatalf("All yielded %d=%d", k, v)
		}
	}
	ctInvariants(t, c)
}

func TestCapacityWeighted(t *testing.T) {
	rng := ctRand(t)
	const maxWeight = 10000
	var causes ctCauses
	c := ctNew(t, Options[int, string]{
		MaxWeight: maxWeight,
		Weigher:   func(_ int, v string) uint32 { return uint32(len(v)) },
		OnEvict:   func(_ int, _ string, cause Cause) { causes.n[cause].Add(1) },
	})
	for k := range 3000 {
		if !c.Set(k, strings.Repeat("x", 1+rng.IntN(200))) {
			t.Fatalf("Set(%d) of a light entry refused", k)
		}
	}
	c.settle()
	s := c.Stats()
	var sum uint64
	for _, v := range ctAllMap(t, c) {
		sum += uint64(len(v))
	}
	if s.Weight > maxWeight || s.Weight != sum || s.Entries != c.Len() {
		t.Errorf("Stats.Weight %d (entries weigh %d), Entries %d, Len %d; bound %d", s.Weight, sum, s.Entries, c.Len(), maxWeight)
	}
	if s.Weight < maxWeight-200 {
		t.Errorf("Stats.Weight %d: more than the heaviest entry below the bound %d (over-eviction)", s.Weight, maxWeight)
	}
	ctInvariants(t, c)

	// Too heavy: refused, and the previous value stays.
	c.Set(-1, "previous")
	before := c.Stats()
	if c.Set(-1, strings.Repeat("h", maxWeight+1)) {
		t.Fatal("Set of an entry heavier than MaxWeight reported true")
	}
	if c.SetWithTTL(-2, strings.Repeat("h", maxWeight+1), time.Hour) {
		t.Fatal("SetWithTTL of an entry heavier than MaxWeight reported true")
	}
	if n := c.SetMany(map[int]string{-3: strings.Repeat("h", maxWeight+1), -4: "ok"}); n != 1 {
		t.Fatalf("SetMany stored %d entries, want 1 (one is too heavy)", n)
	}
	c.settle()
	if v, ok := c.Get(-1); !ok || v != "previous" {
		t.Errorf("after a refused Set: Get(-1) = %q, %v; want the previous value", v, ok)
	}
	for _, k := range []int{-2, -3} {
		if _, ok := c.Peek(k); ok {
			t.Errorf("refused entry %d is in the cache", k)
		}
	}
	after := c.Stats()
	if after.Sets != before.Sets+1 || after.Replaced != before.Replaced {
		t.Errorf("refused Sets changed the counters: Sets %d -> %d, Replaced %d -> %d", before.Sets, after.Sets, before.Replaced, after.Replaced)
	}
	if got := causes.n[CauseReplaced].Load(); got != int64(after.Replaced) {
		t.Errorf("OnEvict replaced calls %d, Stats.Replaced %d", got, after.Replaced)
	}
	// Exactly MaxWeight is allowed.
	if !c.Set(-5, strings.Repeat("m", maxWeight)) {
		t.Error("Set of an entry weighing exactly MaxWeight refused")
	}
	c.settle()
	if s := c.Stats(); s.Weight > maxWeight {
		t.Errorf("Weight %d > %d", s.Weight, maxWeight)
	}
	ctInvariants(t, c)
}

// Concurrent writers, then settle: the bound holds.
//
// Transient slack (observed, not asserted: it depends on scheduling). A
// write lands in the index, and counts in Len, at once; the policy learns
// of it only when a maintenance pass drains the write queue, which a
// writer starts once writeBatch records are queued (then 31 for MaxEntries
// 500, now 1; 1 for a weight bound) and the background goroutine once a
// second. On 2 cores with 4 writers and MaxEntries 500, the peak Len seen by
// a sampling goroutine was usually 513-531 without -race (about writeBatch
// over the bound) but once 773, and 765-1022 under -race. Those peaks were measured
// when maintainLocked popped the write queue until it was empty before it
// evicted anything (one pass applied 367 records and grew the policy to 848
// entries); it now applies at most one queue's worth of records, by chunks
// of writeChunk, and evicts after each chunk. One writer's slack is
// asserted by TestCapacitySlackSequential.
func TestCapacityConcurrent(t *testing.T) {
	rng := ctRand(t)
	const (
		workers  = 4
		perW     = 5000
		keySpace = 20000
	)
	cases := []struct {
		name string
		opts Options[int, int]
		max  uint64
	}{
		{"MaxEntries", Options[int, int]{MaxEntries: 500}, 500},
		{"MaxWeight", Options[int, int]{MaxWeight: 2000, Weigher: func(k, _ int) uint32 { return uint32(1 + k%8) }}, 2000},
		{"MaxEntries with TTL", Options[int, int]{MaxEntries: 500, DefaultTTL: time.Hour, Clock: newFakeClock()}, 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ctNew(t, tc.opts)
			var wg sync.WaitGroup
			var stop atomic.Bool
			var peakLen int
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				for !stop.Load() {
					peakLen = max(peakLen, c.Len())
					runtime.Gosched()
				}
			}()
			for w := range workers {
				seed := rng.Uint64()
				wg.Go(func() {
					r := rand.New(rand.NewPCG(seed, uint64(w)))
					for i := range perW {
						k := r.IntN(keySpace)
						c.Set(k, k)
						if i%4 == 0 {
							if v, ok := c.Get(r.IntN(keySpace)); ok && v < 0 {
								t.Errorf("impossible value %d", v)
							}
						}
					}
				})
			}
			wg.Wait()
			stop.Store(true)
			<-sampled
			c.settle()
			s := c.Stats()
			t.Logf("peak Len during writes %d, after settle %d (Weight %d, bound %d)", peakLen, c.Len(), s.Weight, tc.max)
			if s.Weight > tc.max {
				t.Errorf("Weight %d > bound %d after settle", s.Weight, tc.max)
			}
			if tc.opts.MaxEntries > 0 && c.Len() > tc.opts.MaxEntries {
				t.Errorf("Len %d > MaxEntries %d after settle", c.Len(), tc.opts.MaxEntries)
			}
			ctInvariants(t, c)
		})
	}
}

// Concurrent writers queue their records after leaving the index lock, so
// the records of two Sets of one key can reach maintenance newest first.
// Applying them in that order must not count the key twice: a full cache
// would then evict a live key to make room for a key it already holds.
func TestCapacityReorderedWrites(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("ttl=%v", ttl), func(t *testing.T) {
			var evicted []string
			c := ctNew(t, Options[string, string]{
				MaxEntries: 3,
				DefaultTTL: ttl,
				Clock:      newFakeClock(),
				OnEvict: func(k, v string, cause Cause) {
					if cause == CauseCapacity {
						evicted = append(evicted, fmt.Sprintf("%s=%s", k, v))
					}
				},
			})
			for _, k := range []string{"a", "b", "c"} {
				c.Set(k, k+"0")
			}
			c.settle()

			// Three replacements of a, applied newest first.
			c.reorderWrites(func() {
				c.Set("a", "a1")
				c.Set("a", "a2")
				c.Set("a", "a3")
			})
			if len(evicted) != 0 {
				t.Fatalf("reordered replacements evicted %v", evicted)
			}
			for k, want := range map[string]string{"a": "a3", "b": "b0", "c": "c0"} {
				if v, ok := c.Get(k); !ok || v != want {
					t.Errorf("Get(%q) = %q, %v; want %q", k, v, ok, want)
				}
			}
			ctInvariants(t, c)

			// A replacement and a Delete of the replacing entry, newest first.
			c.reorderWrites(func() {
				c.Set("b", "b1")
				c.Delete("b")
			})
			if _, ok := c.Get("b"); ok {
				t.Error("b found after Delete")
			}
			if c.Len() != 2 || len(evicted) != 0 {
				t.Errorf("Len %d, evicted %v; want 2 and none", c.Len(), evicted)
			}
			ctInvariants(t, c)

			// The cache still honours its bound afterwards.
			c.Set("d", "d0")
			c.Set("e", "e0")
			c.settle()
			if c.Len() != 3 || len(evicted) != 1 {
				t.Errorf("Len %d, evicted %v; want 3 and one eviction", c.Len(), evicted)
			}
			ctInvariants(t, c)
		})
	}
}

// ---------------------------------------------------------------------------
// 6. The OnEvict listener.

// An OnEvict that calls Get, Set, Delete, Stats and Clear on the same cache
// (the same key included), for every cause, must not deadlock.
func TestOnEvictReentrant(t *testing.T) {
	for _, bound := range []int{0, 50} {
		t.Run(fmt.Sprintf("MaxEntries=%d", bound), func(t *testing.T) {
			clk := newFakeClock()
			var c *Cache[int, int]
			var causes ctCauses
			var budget atomic.Int64
			budget.Store(3000)
			c = ctNew(t, Options[int, int]{MaxEntries: bound, Clock: clk, OnEvict: func(k, v int, cause Cause) {
				causes.n[cause].Add(1)
				c.Get(k)
				c.Peek(k)
				c.Get(k + 1)
				_ = c.Len()
				if budget.Add(-1) < 0 {
					return
				}
				switch cause {
				case CauseDeleted:
					c.Set(k, v) // the same key again
				case CauseReplaced:
					c.Delete(k + 1)
					c.SetWithTTL(k+1, v, time.Millisecond)
				case CauseCapacity:
					c.Set(k, v)
					c.Delete(k)
				case CauseExpired:
					c.SetWithTTL(k, v, time.Millisecond)
					c.Delete(k)
				case CauseCleared:
					c.Set(k, v)
				}
				if k%97 == 0 {
					c.Stats() // runs maintenance from inside the callback
				}
				if k%211 == 0 && budget.Load() > 1000 {
					c.Clear()
				}
			}})
			ctWithin(t, 30*time.Second, "re-entrant OnEvict workload", func() {
				// On the empty cache first, where nothing can be evicted
				// between two calls: one replacement and one deletion
				// whatever the maintenance timing, so that those causes'
				// re-entrant paths always run (the churn below may evict
				// or clear every key before it is written again).
				c.Set(-10, 1)
				c.Set(-10, 2)
				c.Set(-20, 1)
				c.Delete(-20)
				for i := range 2000 {
					c.Set(i%300, i)
				}
				for i := range 300 {
					c.Delete(i)
				}
				for i := range 300 {
					c.SetWithTTL(i, i, time.Millisecond)
				}
				clk.Advance(time.Second)
				c.settle()
				for i := range 100 {
					c.Get(i)
					c.Set(i, i)
				}
				c.Clear()
				clk.Advance(time.Second)
				c.settle()
			})
			t.Logf("callbacks: %v", &causes)
			for cause := range numCauses {
				if bound == 0 && cause == CauseCapacity {
					continue
				}
				if causes.n[cause].Load() == 0 {
					t.Errorf("no OnEvict call with cause %v: the re-entrant path is not exercised", cause)
				}
			}
			ctInvariants(t, c)
		})
	}
}

// The background goroutine runs OnEvict for expired entries: a callback
// that calls the cache from there must not deadlock either.
func TestOnEvictReentrantBackground(t *testing.T) {
	const n = 100
	var c *Cache[int, int]
	var expired, again atomic.Int64
	c = ctNew(t, Options[int, int]{MaxEntries: 1000, OnEvict: func(k, v int, cause Cause) {
		if cause != CauseExpired {
			return
		}
		expired.Add(1)
		c.Get(k)
		if v > 0 { // first expiry: store it again, then delete a neighbour
			again.Add(1)
			c.SetWithTTL(k, -v, time.Millisecond)
			c.Delete(k + n)
		}
	}})
	// The neighbours first: a Set runs a maintenance pass (one after every
	// write in a cache this small), which may expire a key written a
	// millisecond before, and its callback's Delete of a neighbour not
	// yet written would find nothing (on a loaded machine the neighbour
	// then stayed: Len 1 for good).
	for k := range n {
		c.Set(k+n, k)
	}
	for k := range n {
		c.SetWithTTL(k, k+1, time.Millisecond)
	}
	// Wait, without reads, for the background goroutine to expire the
	// entries twice (it runs maintenance at least once a second).
	ctWithin(t, 30*time.Second, "background expiry with a re-entrant OnEvict", func() {
		for expired.Load() < 2*n || c.Len() != 0 {
			time.Sleep(time.Millisecond)
		}
	})
	if again.Load() != n || expired.Load() != 2*n {
		t.Errorf("%d re-inserts, %d expirations; want %d, %d", again.Load(), expired.Load(), n, 2*n)
	}
	ctInvariants(t, c)
}

// OnEvict may call the cache, Close included. When the background
// goroutine runs the callback (expiry without reads), Close must not wait
// for that very goroutine to exit.
func TestOnEvictCallsClose(t *testing.T) {
	var c *Cache[int, int]
	closed := make(chan struct{})
	var once sync.Once
	// No t.Cleanup(c.Close): if the callback's Close hangs, so would that.
	c = Must(Options[int, int]{OnEvict: func(_, _ int, cause Cause) {
		if cause == CauseExpired {
			once.Do(func() {
				c.Close()
				close(closed)
			})
		}
	}})
	c.SetWithTTL(1, 1, time.Millisecond) // expired by the background goroutine, within about a second
	// A deadlock guard: the expiry waits for a tick of the background goroutine.
	guard := time.NewTimer(60 * time.Second)
	defer guard.Stop()
	select {
	case <-closed:
	case <-guard.C:
		t.Fatal("Close called from OnEvict (on the background goroutine) has not returned after 60s: it waits for its own goroutine to exit")
	}
	c.Close()
	if !c.Set(2, 2) {
		t.Error("Set after Close refused")
	}
}

// Heavy concurrent churn: every stored value is reported exactly once by
// OnEvict once everything is cleared, and the Stats counters match the
// causes reported.
func TestOnEvictExactlyOnce(t *testing.T) {
	rng := ctRand(t)
	const (
		workers  = 4
		ops      = 4000
		keySpace = 2048
	)
	// Values: worker<<48 | seq<<16 | key.
	enc := func(w, seq, k int) uint64 { return uint64(w)<<48 | uint64(seq)<<16 | uint64(k) }
	cases := []struct {
		name string
		opts Options[int, uint64]
	}{
		{"unbounded", Options[int, uint64]{}},
		{"MaxEntries", Options[int, uint64]{MaxEntries: 256}},
		{"MaxWeight", Options[int, uint64]{MaxWeight: 1000, Weigher: func(_ int, v uint64) uint32 {
			if (v>>16)&0xffff%50 == 49 {
				return 2000 // too heavy: refused
			}
			return uint32(1 + (v>>16)%8)
		}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			var causes ctCauses
			var reported, stored sync.Map // value -> Cause / struct{}
			var dups, mismatched atomic.Int64
			opts := tc.opts
			opts.Clock = clk
			opts.OnEvict = func(k int, v uint64, cause Cause) {
				causes.n[cause].Add(1)
				if int(v&0xffff) != k {
					mismatched.Add(1)
				}
				if prev, loaded := reported.LoadOrStore(v, cause); loaded {
					if dups.Add(1) == 1 {
						t.Errorf("value %#x of key %d reported twice: %v, then %v", v, k, prev, cause)
					}
				}
			}
			c := ctNew(t, opts)
			var sets atomic.Int64
			var wg sync.WaitGroup
			for w := range workers {
				seed := rng.Uint64()
				wg.Go(func() {
					r := rand.New(rand.NewPCG(seed, uint64(w)))
					for seq := range ops {
						k := r.IntN(keySpace)
						v := enc(w, seq, k)
						ok := true
						switch op := r.IntN(1000); {
						case op < 450:
							ok = c.Set(k, v)
						case op < 650:
							ok = c.SetWithTTL(k, v, time.Duration(1+r.IntN(20))*time.Millisecond)
						case op < 900:
							c.Delete(k)
							continue
						case op < 995:
							if got, hit := c.Get(k); hit && int(got&0xffff) != k {
								t.Errorf("Get(%d) returned %#x, a value of key %d", k, got, got&0xffff)
							}
							continue
						default:
							c.Clear()
							continue
						}
						if ok {
							sets.Add(1)
							stored.Store(v, struct{}{})
						}
						if w == 0 && seq%16 == 0 {
							clk.Advance(time.Millisecond)
						}
					}
				})
			}
			wg.Wait()
			c.settle()
			c.Clear()
			c.settle()

			if l := c.Len(); l != 0 {
				t.Errorf("Len = %d after the final Clear", l)
			}
			s := c.Stats()
			calls := causes.total()
			t.Logf("%d successful sets, %d callbacks (%v); stats %+v", sets.Load(), calls, &causes, s)
			if calls != sets.Load() {
				t.Errorf("%d OnEvict calls for %d stored values", calls, sets.Load())
			}
			if mismatched.Load() != 0 {
				t.Errorf("%d callbacks paired a value with another key", mismatched.Load())
			}
			missing := 0
			stored.Range(func(v, _ any) bool {
				if _, ok := reported.Load(v); !ok {
					if missing++; missing <= 5 {
						t.Errorf("stored value %#x never reported", v)
					}
				}
				return true
			})
			reported.Range(func(v, cause any) bool {
				if _, ok := stored.Load(v); !ok {
					t.Errorf("value %#x reported (%v) but never stored", v, cause)
				}
				return true
			})
			if s.Sets != uint64(sets.Load()) {
				t.Errorf("Stats.Sets = %d, %d Sets succeeded", s.Sets, sets.Load())
			}
			sum := s.Evicted + s.Expired + s.Deleted + s.Replaced + s.Cleared
			if sum != uint64(calls) {
				t.Errorf("Evicted+Expired+Deleted+Replaced+Cleared = %d, %d callbacks", sum, calls)
			}
			for _, x := range []struct {
				cause Cause
				stat  uint64
			}{
				{CauseCapacity, s.Evicted}, {CauseExpired, s.Expired}, {CauseDeleted, s.Deleted},
				{CauseReplaced, s.Replaced}, {CauseCleared, s.Cleared},
			} {
				if got := uint64(causes.n[x.cause].Load()); got != x.stat {
					t.Errorf("%d callbacks with cause %v, Stats says %d", got, x.cause, x.stat)
				}
			}
			if tc.opts.MaxEntries > 0 && s.Evicted == 0 {
				t.Error("no capacity eviction: the test does not exercise the bound")
			}
			if s.Expired == 0 || s.Deleted == 0 || s.Replaced == 0 || s.Cleared == 0 {
				t.Errorf("a cause was never exercised: %+v", s)
			}
			ctInvariants(t, c)
		})
	}
}

// ---------------------------------------------------------------------------
// 7. Clear and Delete.

// Clear concurrently with Set, SetWithTTL, Delete and Get: race-clean, no
// stale value is ever returned, and the bookkeeping is consistent after.
func TestClearConcurrent(t *testing.T) {
	rng := ctRand(t)
	const (
		workers = 3
		ops     = 3000
		owned   = 200
	)
	for _, bound := range []int{0, 256} {
		t.Run(fmt.Sprintf("MaxEntries=%d", bound), func(t *testing.T) {
			clk := newFakeClock()
			c := ctNew(t, Options[int, int]{MaxEntries: bound, Clock: clk})
			var wg sync.WaitGroup
			var stop atomic.Bool
			clears := 0
			wg.Go(func() {
				for !stop.Load() {
					c.Clear()
					clears++
					clk.Advance(time.Millisecond)
					runtime.Gosched()
				}
			})
			var writers sync.WaitGroup
			for w := range workers {
				seed := rng.Uint64()
				writers.Go(func() {
					r := rand.New(rand.NewPCG(seed, uint64(w)))
					base := w * owned
					gen := 0
					for range ops {
						k := base + r.IntN(owned)
						gen++
						v := k<<16 | gen&0xffff
						switch r.IntN(4) {
						case 0:
							c.Set(k, v)
							// Clear or eviction may remove it; nothing
							// else may replace it.
							if got, ok := c.Get(k); ok && got != v {
								t.Errorf("Get(%d) = %#x right after Set(%#x)", k, got, v)
								return
							}
						case 1:
							c.SetWithTTL(k, v, time.Duration(1+r.IntN(5))*time.Millisecond)
						case 2:
							c.Delete(k)
							if got, ok := c.Get(k); ok {
								t.Errorf("Get(%d) = %#x right after Delete", k, got)
								return
							}
						default:
							if got, ok := c.Get(k); ok && got>>16 != k {
								t.Errorf("Get(%d) = %#x, a value of another key", k, got)
								return
							}
						}
					}
				})
			}
			writers.Wait()
			stop.Store(true)
			wg.Wait()
			t.Logf("%d Clears ran during the writes", clears)
			ctInvariants(t, c)
			if l, n := c.Len(), len(ctAllMap(t, c)); l < n {
				t.Errorf("Len %d < %d entries yielded by All", l, n)
			}
			c.Clear()
			if l, n, w := c.Len(), len(ctAllMap(t, c)), c.wheelLen(); l != 0 || n != 0 || w != 0 {
				t.Errorf("after a quiet Clear: Len %d, All %d, wheel %d", l, n, w)
			}
			ctInvariants(t, c)
		})
	}
}

// ctHoldMaintenance holds the maintenance lock while fn runs, so every write
// fn makes stays buffered in the write queue (fn must stay under its
// capacity, or a writer would block for the lock).
func ctHoldMaintenance[K comparable, V any](c *Cache[K, V], fn func()) {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	fn()
}

func TestDeleteThenGetNeverResurrects(t *testing.T) {
	configs := []struct {
		name string
		opts Options[int, int]
	}{
		{"unbounded", Options[int, int]{}},
		{"unbounded TTL", Options[int, int]{DefaultTTL: time.Hour, Clock: newFakeClock()}},
		{"MaxEntries", Options[int, int]{MaxEntries: 1000}},
		{"MaxEntries TTL", Options[int, int]{MaxEntries: 1000, DefaultTTL: time.Hour, Clock: newFakeClock()}},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			const n = 5000
			c := ctNew(t, cfg.opts)
			// Set many keys (more than the bound), then delete and read each.
			for k := range n {
				c.Set(k, k)
			}
			for k := range n {
				c.Delete(k)
				if v, ok := c.Get(k); ok {
					t.Fatalf("Get(%d) = %d right after Delete", k, v)
				}
			}
			for k := range n {
				if v, ok := c.Peek(k); ok {
					t.Fatalf("Peek(%d) = %d after Delete", k, v)
				}
			}
			c.settle()
			if l := c.Len(); l != 0 {
				t.Fatalf("Len = %d after deleting everything", l)
			}
			ctInvariants(t, c)

			// The same with every write still buffered: maintenance cannot
			// run while the test holds its lock. (Writes to an unbounded
			// cache without TTL queue nothing.)
			queues := cfg.opts.MaxEntries > 0 || cfg.opts.DefaultTTL > 0
			m := c.c.writes.Cap() / 4 // 2.5*m events: the queue never fills
			ctHoldMaintenance(c, func() {
				for k := range m {
					c.Set(k, k+1)
				}
				for k := range m {
					c.Set(k, k+2) // replace
				}
				for k := range m / 2 {
					c.Delete(k)
				}
				// At least the m inserts are queued (a replacement of a
				// word-sized value without TTL is done in place and
				// queues nothing).
				if q := c.c.writes.Len(); queues && q < m {
					t.Errorf("only %d writes buffered, want at least %d", q, m)
				}
				for k := range m {
					v, ok := c.Get(k)
					if k < m/2 && ok {
						t.Errorf("buffered: Get(%d) = %d after Delete", k, v)
					}
					if k >= m/2 && (!ok || v != k+2) {
						t.Errorf("buffered: Get(%d) = %d, %v; want %d", k, v, ok, k+2)
					}
				}
			})
			c.settle()
			for k := range m {
				v, ok := c.Get(k)
				if k < m/2 && ok {
					t.Errorf("after settle: Get(%d) = %d after Delete", k, v)
				}
				if k >= m/2 && (!ok || v != k+2) {
					t.Errorf("after settle: Get(%d) = %d, %v; want %d", k, v, ok, k+2)
				}
			}
			ctInvariants(t, c)

			// Set then Delete, one key at a time, after heavy writes.
			for k := range n {
				c.Set(n+k, k)
				c.Set(k, k)
				c.Delete(k)
				if v, ok := c.Get(k); ok {
					t.Fatalf("interleaved: Get(%d) = %d right after Delete", k, v)
				}
			}
			c.settle()
			for k := range n {
				if v, ok := c.Get(k); ok {
					t.Fatalf("Get(%d) = %d after settle", k, v)
				}
			}
			ctInvariants(t, c)
		})
	}
}

// Goroutines that own their keys Set, Delete and Get them while others
// flood the cache with writes: a deleted key never comes back.
func TestDeleteThenGetConcurrent(t *testing.T) {
	rng := ctRand(t)
	for _, bound := range []int{0, 500} {
		t.Run(fmt.Sprintf("MaxEntries=%d", bound), func(t *testing.T) {
			c := ctNew(t, Options[int, int]{MaxEntries: bound})
			var flood, owners sync.WaitGroup
			var stop atomic.Bool
			for f := range 2 {
				seed := rng.Uint64()
				flood.Go(func() {
					r := rand.New(rand.NewPCG(seed, uint64(f)))
					for !stop.Load() {
						k := 1_000_000 + r.IntN(5000)
						c.Set(k, k)
					}
				})
			}
			for w := range 3 {
				owners.Go(func() {
					for i := range 3000 {
						k := w*10000 + i%500
						c.Set(k, i)
						if v, ok := c.Get(k); ok && v != i {
							t.Errorf("Get(%d) = %d, want %d (or a miss)", k, v, i)
							return
						}
						c.Delete(k)
						if v, ok := c.Get(k); ok {
							t.Errorf("Get(%d) = %d right after Delete", k, v)
							return
						}
					}
				})
			}
			owners.Wait()
			stop.Store(true)
			flood.Wait()
			ctInvariants(t, c)
			for w := range 3 {
				for i := range 500 {
					if v, ok := c.Get(w*10000 + i); ok {
						t.Errorf("deleted key %d present with %d", w*10000+i, v)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 8. Close and the GC cleanup.

func TestCloseStopsGoroutineSynctest(t *testing.T) {
	// synctest.Test fails if a goroutine started in the bubble outlives it:
	// every cache's background goroutine must have exited after Close.
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		configs := []Options[int, int]{
			{},
			{MaxEntries: 100},
			{DefaultTTL: time.Second},
			{MaxWeight: 100, Weigher: func(_, v int) uint32 { return uint32(v%10 + 1) }},
			{Clock: clk, DefaultTTL: time.Second},
			{MaxEntries: 10, DefaultTTL: time.Minute, TTLJitter: 0.3, OnEvict: func(int, int, Cause) {}},
		}
		for i, opts := range configs {
			c, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			ctPin(c)
			for k := range 50 {
				c.Set(k, k)
			}
			c.SetWithTTL(100, 100, time.Millisecond) // switches the goroutine to the fast tick
			time.Sleep(1500 * time.Millisecond)
			clk.Advance(time.Second)
			c.Close()
			select {
			case <-c.c.done:
			default:
				t.Errorf("config %d: Close returned before the goroutine exited", i)
			}
			c.Close() // idempotent
			// Still usable.
			if !c.Set(200, 7) {
				t.Errorf("config %d: Set after Close refused", i)
			}
			// (A bounded cache's policy may refuse a new entry at once.)
			bounded := opts.MaxEntries > 0 || opts.MaxWeight > 0
			if v, ok := c.Get(200); (!ok && !bounded) || (ok && v != 7) {
				t.Errorf("config %d: Get after Close = %d, %v", i, v, ok)
			}
			c.Delete(200)
			if _, ok := c.Get(200); ok {
				t.Errorf("config %d: Get after Close and Delete hit", i)
			}
			c.SetWithTTL(201, 1, time.Hour)
			_ = c.Stats()
			for range c.All() {
			}
			c.Clear()
			if l := c.Len(); l != 0 {
				t.Errorf("config %d: Len %d after Clear after Close", i, l)
			}
			ctInvariants(t, c)
			c.Close()
		}
	})
}

// After Close, Get must still never return an expired entry (Close's doc:
// the cache stays usable; only reclaiming waits for other operations).
func TestClosedCacheHonoursTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := ctNew(t, Options[int, int]{})
		ctPin(c)
		c.SetWithTTL(1, 1, time.Second)
		c.Close()
		c.SetWithTTL(2, 2, time.Second)
		c.Set(3, 3)
		time.Sleep(2 * time.Second)
		ctExpect(t, c, 1, 1, false, "1s after the TTL of an entry set before Close")
		ctExpect(t, c, 2, 2, false, "1s after the TTL of an entry set after Close")
		ctExpect(t, c, 3, 3, true, "entry without TTL after Close")
	})
}

// A cache created in a synctest bubble, used and closed there, must not
// break the process when the GC later collects its handle. Run in a child
// process, since the failure is a fatal error (not a panic) that would
// kill this test binary.
func TestSynctestCacheCollectedAfterClose(t *testing.T) {
	if os.Getenv("CACHEKIT_CT_CHILD") == t.Name() {
		ctCollectBubbledCache(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot re-run the test binary: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // deadlock guard
	defer cancel()
	args := []string{exe, "-test.run=^" + t.Name() + "$", "-test.count=1", "-test.v"}
	if w := os.Getenv("CACHEKIT_TEST_EXEC"); w != "" {
		// The test binary runs under an emulator (go test -exec, as make
		// test-32bit does where the machine runs no 32-bit x86 code): so
		// must the child.
		args = append([]string{w}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "CACHEKIT_CT_CHILD="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child process failed (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "handle collected") {
		t.Fatalf("the child did not get the handle collected:\n%s", out)
	}
}

func ctCollectBubbledCache(t *testing.T) {
	var w weak.Pointer[Cache[int, int]]
	synctest.Test(t, func(t *testing.T) {
		c := Must(Options[int, int]{DefaultTTL: time.Second})
		c.Set(1, 1)
		time.Sleep(2 * time.Second)
		c.Close()
		w = weak.Make(c)
	})
	guard := time.Now().Add(20 * time.Second)
	for w.Value() != nil {
		if time.Now().After(guard) {
			t.Fatal("the handle was not collected")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	t.Log("handle collected")
	// Its cleanup, if still registered, is queued now: let it run.
	for range 20 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
	}
}

// ctRunGoroutines counts the goroutines that New started (the caches'
// background goroutines), from a dump of every goroutine's stack.
func ctRunGoroutines() int {
	return strings.Count(string(leaktest.Stacks()), "created by github.com/cachekit/cachekit.New[")
}

func TestCloseNoGoroutineLeak(t *testing.T) {
	runtime.GC()
	before, beforeAll := ctRunGoroutines(), runtime.NumGoroutine()
	const n = 100
	configs := []Options[int, int]{
		{}, {MaxEntries: 10}, {DefaultTTL: time.Minute}, {Clock: newFakeClock()},
	}
	caches := make([]*Cache[int, int], 0, n)
	for i := range n {
		c := Must(configs[i%len(configs)])
		c.Set(i, i)
		c.SetWithTTL(-i, i, time.Hour)
		caches = append(caches, c)
	}
	if got := ctRunGoroutines(); got < before+n {
		t.Fatalf("%d caches but only %d new background goroutines: the leak check cannot see them", n, got-before)
	}
	if got := runtime.NumGoroutine(); got < beforeAll+n {
		t.Fatalf("%d caches but NumGoroutine grew by %d only", n, got-beforeAll)
	}
	for _, c := range caches {
		c.Close()
	}
	// Close waits until the goroutine closes done; give it a bounded time
	// to return from run. Both counts must come back: the goroutines that
	// New started (precise, from the stacks) and NumGoroutine (which other
	// goroutines of the runtime may perturb briefly).
	guard := time.Now().Add(60 * time.Second) // a deadlock guard only
	got, gotAll := ctRunGoroutines(), runtime.NumGoroutine()
	for (got > before || gotAll > beforeAll) && time.Now().Before(guard) {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		got, gotAll = ctRunGoroutines(), runtime.NumGoroutine()
	}
	if got > before || gotAll > beforeAll {
		t.Fatalf("after Close: %d cache goroutines (%d before), NumGoroutine %d (%d before)", got, before, gotAll, beforeAll)
	}
}

//go:noinline
func ctAbandon(opts Options[int, int]) *cache[int, int] {
	h := Must(opts)
	for k := range 100 {
		h.Set(k, k)
	}
	h.SetWithTTL(-1, -1, time.Hour)
	return h.c
}

func TestDroppedCacheStoppedByGC(t *testing.T) {
	for _, opts := range []Options[int, int]{
		{},
		{MaxEntries: 10, DefaultTTL: time.Hour, OnEvict: func(int, int, Cause) {}},
	} {
		c := ctAbandon(opts)
		guard := time.NewTimer(20 * time.Second)
		stopped := false
		for !stopped {
			runtime.GC()
			select {
			case <-c.done:
				stopped = true
			case <-time.After(5 * time.Millisecond):
			case <-guard.C:
				t.Fatal("the background goroutine of a dropped cache is still running after 20s of GCs")
			}
		}
		guard.Stop()
		select {
		case <-c.stop:
		default:
			t.Error("done is closed but stop is not")
		}
	}
}

// ---------------------------------------------------------------------------
// Value representations: word-sized values are replaced in place (value.go),
// others by a new entry. Each kind must return and report the right values.

type ctSmallStruct struct {
	A int32
	B int16
}

func TestValueKinds(t *testing.T) {
	x, y, z := new(int), new(int), new(int)
	c1, c2, c3 := make(chan int), make(chan int), make(chan int)
	t.Run("int8", func(t *testing.T) { ctValueKind(t, [3]int8{-1, 7, 127}) })
	t.Run("bool-ish uint8", func(t *testing.T) { ctValueKind(t, [3]uint8{0, 1, 255}) })
	t.Run("float32", func(t *testing.T) { ctValueKind(t, [3]float32{0.5, -2, 3e38}) })
	t.Run("complex64", func(t *testing.T) { ctValueKind(t, [3]complex64{1i, 2, -3 - 3i}) })
	t.Run("[8]byte", func(t *testing.T) { ctValueKind(t, [3][8]byte{{1}, {7: 9}, {1, 2, 3, 4, 5, 6, 7, 8}}) })
	t.Run("small struct", func(t *testing.T) { ctValueKind(t, [3]ctSmallStruct{{1, 2}, {-1, -2}, {1 << 30, 1 << 14}}) })
	t.Run("uint64", func(t *testing.T) { ctValueKind(t, [3]uint64{math.MaxUint64, 1, 1 << 63}) })
	t.Run("pointer", func(t *testing.T) { ctValueKind(t, [3]*int{x, y, z}) })
	t.Run("chan", func(t *testing.T) { ctValueKind(t, [3]chan int{c1, c2, c3}) })
	t.Run("string", func(t *testing.T) { ctValueKind(t, [3]string{"a", "bb", "ccc"}) })
	t.Run("[2]int64", func(t *testing.T) { ctValueKind(t, [3][2]int64{{1, 2}, {3, 4}, {5, 6}}) })
	t.Run("interface", func(t *testing.T) { ctValueKind(t, [3]any{1, "two", 3.0}) })
}

// TestEntryLayout pins what value.go relies on (a value of at most 8
// bytes has an aligned word inside the entry to itself) and the entries'
// sizes, which are most of a cache's memory.
func TestEntryLayout(t *testing.T) {
	word := func(name string, off, size, align uintptr) {
		t.Helper()
		if off%8 != 0 || off+8 > size || align < 8 {
			t.Errorf("%s: value at offset %d of %d bytes, alignment %d: no aligned word of its own", name, off, size, align)
		}
	}
	var e1 entry[string, int8]
	word("entry[string, int8]", unsafe.Offsetof(e1.value), unsafe.Sizeof(e1), unsafe.Alignof(e1))
	var e2 entry[int32, uint64]
	word("entry[int32, uint64]", unsafe.Offsetof(e2.value), unsafe.Sizeof(e2), unsafe.Alignof(e2))
	var e3 entry[uint8, struct{}]
	word("entry[uint8, struct{}]", unsafe.Offsetof(e3.value), unsafe.Sizeof(e3), unsafe.Alignof(e3))
	var e4 timedEntry[int16, ctSmallStruct]
	word("timedEntry[int16, ctSmallStruct]", unsafe.Offsetof(e4.value), unsafe.Offsetof(e4.timer), 8)

	// Two string headers plus the node (two links and a word of weight
	// and flags, no hash); a deadline and two timer links more with a TTL.
	// On 64-bit platforms that is 56 and 80 bytes: the allocator's 64- and
	// 80-byte size classes.
	ptr := unsafe.Sizeof(uintptr(0))
	if got, want := unsafe.Sizeof(entry[string, string]{}), 6*ptr+8; got != want {
		t.Errorf("Sizeof(entry[string, string]) = %d, want %d", got, want)
	}
	if got, want := unsafe.Sizeof(timedEntry[string, string]{}), 8*ptr+16; got != want {
		t.Errorf("Sizeof(timedEntry[string, string]) = %d, want %d", got, want)
	}
}

// ctValueKind runs a scripted sequence and a concurrent replace/read loop
// with three distinct non-zero values of V.
func ctValueKind[V comparable](t *testing.T, vals [3]V) {
	type rec struct {
		k     int
		v     V
		cause Cause
	}
	for _, bound := range []int{0, 100} {
		clk := newFakeClock()
		var mu sync.Mutex
		var got []rec
		c := ctNew(t, Options[int, V]{MaxEntries: bound, Clock: clk, OnEvict: func(k int, v V, cause Cause) {
			mu.Lock()
			got = append(got, rec{k, v, cause})
			mu.Unlock()
		}})
		expect := func(when string, want ...rec) {
			t.Helper()
			c.settle()
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(got, want) {
				t.Errorf("MaxEntries=%d, %s: OnEvict calls %v, want %v", bound, when, got, want)
			}
			got = nil
		}
		c.Set(1, vals[0])
		ctExpect(t, c, 1, vals[0], true, "after Set")
		c.Set(1, vals[1])
		ctExpect(t, c, 1, vals[1], true, "after replacing")
		expect("replace", rec{1, vals[0], CauseReplaced})
		c.Set(1, vals[2])
		c.Set(1, vals[0])
		ctExpect(t, c, 1, vals[0], true, "after replacing twice")
		expect("replace twice", rec{1, vals[1], CauseReplaced}, rec{1, vals[2], CauseReplaced})
		c.SetWithTTL(1, vals[1], time.Second)
		ctExpect(t, c, 1, vals[1], true, "after SetWithTTL")
		expect("replace with TTL", rec{1, vals[0], CauseReplaced})
		c.SetWithTTL(1, vals[2], 0)
		ctExpect(t, c, 1, vals[2], true, "after SetWithTTL 0")
		expect("replace TTL entry", rec{1, vals[1], CauseReplaced})
		c.SetWithTTL(1, vals[0], time.Second)
		clk.Advance(time.Second)
		ctExpect(t, c, 1, vals[0], false, "after the TTL")
		expect("expiry", rec{1, vals[2], CauseReplaced}, rec{1, vals[0], CauseExpired})
		c.Set(2, vals[1])
		c.Set(2, vals[2])
		c.Delete(2)
		expect("delete", rec{2, vals[1], CauseReplaced}, rec{2, vals[2], CauseDeleted})
		c.Set(3, vals[1])
		c.Set(3, vals[0])
		c.Clear()
		expect("clear", rec{3, vals[1], CauseReplaced}, rec{3, vals[0], CauseCleared})
		ctInvariants(t, c)
	}

	// Concurrent replacements of one key while others read it: a read
	// returns one of the values written, and every value written is
	// reported once.
	var reported [3]atomic.Int64
	var other atomic.Int64
	c := ctNew(t, Options[int, V]{MaxEntries: 100, OnEvict: func(_ int, v V, _ Cause) {
		for i := range vals {
			if v == vals[i] {
				reported[i].Add(1)
				return
			}
		}
		other.Add(1)
	}})
	var written [3]atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := range 2000 {
				j := (i + w) % 3
				c.Set(0, vals[j])
				written[j].Add(1)
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 2000 {
				if v, ok := c.Get(0); ok && v != vals[0] && v != vals[1] && v != vals[2] {
					t.Errorf("Get returned %v, never written", v)
					return
				}
			}
		})
	}
	wg.Wait()
	c.Delete(0)
	c.settle()
	for i := range vals {
		if reported[i].Load() != written[i].Load() {
			t.Errorf("value %v: written %d times, reported %d times", vals[i], written[i].Load(), reported[i].Load())
		}
	}
	if other.Load() != 0 {
		t.Errorf("%d reports of a value never written", other.Load())
	}
}

// ---------------------------------------------------------------------------
// 9. Stats.

func TestStatsScripted(t *testing.T) {
	for _, bound := range []int{0, 100} {
		t.Run(fmt.Sprintf("MaxEntries=%d", bound), func(t *testing.T) {
			clk := newFakeClock()
			c := ctNew(t, Options[string, int]{MaxEntries: bound, Clock: clk})
			if s := c.Stats(); s != (Stats{}) || s.HitRatio() != 0 {
				t.Fatalf("new cache: Stats %+v, HitRatio %v; want zero", s, s.HitRatio())
			}
			c.Set("a", 1)
			c.Set("b", 2)
			c.Set("c", 3)       // sets 3
			c.Get("a")          // hit 1
			c.Get("a")          // hit 2
			c.Get("b")          // hit 3
			c.Get("x")          // miss 1
			c.Peek("a")         // not counted
			c.Peek("x")         // not counted
			for range c.All() { // not counted
			}
			c.GetMany([]string{"a", "x", "y", "c"})   // hits 5, misses 3
			c.Set("a", 10)                            // sets 4, replaced 1
			c.Delete("b")                             // deleted 1
			c.Delete("nope")                          // nothing
			c.SetMany(map[string]int{"d": 4, "e": 5}) // sets 6
			c.SetWithTTL("t", 7, time.Second)         // sets 7
			clk.Advance(time.Second)
			c.Get("t")  // miss 4: expired
			c.Peek("t") // not counted
			want := Stats{Hits: 5, Misses: 4, Sets: 7, Replaced: 1, Deleted: 1, Expired: 1, Entries: 4, Weight: 4}
			if s := c.Stats(); s != want {
				t.Errorf("Stats = %+v\n          want %+v", s, want)
			}
			if r, w := c.Stats().HitRatio(), 5.0/9; math.Abs(r-w) > 1e-12 {
				t.Errorf("HitRatio = %v, want %v", r, w)
			}
			c.Clear()
			want.Cleared, want.Entries, want.Weight = 4, 0, 0
			if s := c.Stats(); s != want {
				t.Errorf("after Clear: Stats = %+v\n                   want %+v", s, want)
			}
		})
	}
	t.Run("weighted", func(t *testing.T) {
		c := ctNew(t, Options[string, string]{MaxWeight: 100, Weigher: func(_, v string) uint32 { return uint32(len(v)) }})
		c.Set("a", "xxx")
		c.Set("b", "xxxxx")
		c.Set("c", strings.Repeat("z", 101)) // refused, not counted
		c.Get("a")
		c.Get("c")
		want := Stats{Hits: 1, Misses: 1, Sets: 2, Entries: 2, Weight: 8}
		if s := c.Stats(); s != want {
			t.Errorf("Stats = %+v\n          want %+v", s, want)
		}
	})
	t.Run("HitRatio", func(t *testing.T) {
		for _, tc := range []struct {
			s    Stats
			want float64
		}{
			{Stats{}, 0}, {Stats{Misses: 3}, 0}, {Stats{Hits: 3}, 1}, {Stats{Hits: 3, Misses: 1}, 0.75},
		} {
			if got := tc.s.HitRatio(); got != tc.want {
				t.Errorf("%+v.HitRatio() = %v, want %v", tc.s, got, tc.want)
			}
		}
	})
}

// TestLoneReaderRecordsEveryRead checks that a goroutine reading alone
// (or replacing values in place) tells the policy about every access:
// when its stripe of the read buffer is full, the maintenance pass it runs
// empties the stripe, and the access is queued after it instead of
// dropped. Only accesses that find a pass already underway are dropped.
// (Dropping one read in seventeen cost the real Cache 0.8 point of hit
// ratio against the policy alone on a trace that interleaves a Zipf
// stream with a loop larger than the cache.) In a synctest bubble, so
// that the background goroutine never runs a pass meanwhile.
func TestLoneReaderRecordsEveryRead(t *testing.T) {
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableStats=%v", disable), func(t *testing.T) {
			testLoneReaderRecordsEveryRead(t, disable)
		})
	}
}

// testLoneReaderRecordsEveryRead is TestLoneReaderRecordsEveryRead with
// or without hit counting, which must not change what the policy sees.
func testLoneReaderRecordsEveryRead(t *testing.T, disableStats bool) {
	counted := uint64(1)
	if disableStats {
		counted = 0
	}
	synctest.Test(t, func(t *testing.T) {
		const max, reads = 100, 1000
		c := Must(Options[int, int]{MaxEntries: max, DisableStats: disableStats})
		defer c.Close()
		for k := range max {
			c.Set(k, k)
		}
		c.settle() // past half full: reads are recorded from now on
		queued := c.c.reads.Added()
		for i := range reads {
			if _, ok := c.Get(i % max); !ok {
				t.Fatalf("Get(%d) missed", i%max)
			}
		}
		if got := c.c.reads.Added() - queued; got != reads {
			t.Errorf("%d of %d reads queued for the policy", got, reads)
		}
		if s := c.Stats(); s.Hits != counted*reads {
			t.Errorf("Stats.Hits = %d, want %d", s.Hits, counted*reads)
		}
		// A Set that replaces a word-sized value in place is an access
		// for the policy, queued the same way.
		queued = c.c.reads.Added()
		for i := range reads {
			c.Set(i%max, -i)
		}
		if got := c.c.reads.Added() - queued; got != reads {
			t.Errorf("%d of %d in-place Sets queued for the policy", got, reads)
		}
		want := Stats{Hits: counted * reads, Sets: max + reads, Replaced: reads, Entries: max, Weight: max}
		if s := c.Stats(); s != want {
			t.Errorf("Stats = %+v\n          want %+v", s, want)
		}
	})
}

// TestStatsDisabled runs a script like TestStatsScripted's with DisableStats:
// hits and misses are not counted, every other counter is; and before the
// policy records reads (an unbounded cache, or one less than half full), a
// Get writes nothing to the read buffer's stripes, neither queues nor
// counts.
func TestStatsDisabled(t *testing.T) {
	for _, bound := range []int{0, 100} {
		t.Run(fmt.Sprintf("MaxEntries=%d", bound), func(t *testing.T) {
			clk := newFakeClock()
			c := ctNew(t, Options[string, int]{MaxEntries: bound, Clock: clk, DisableStats: true})
			c.Set("a", 1)
			c.Set("b", 2)
			c.Set("c", 3)
			c.settle()
			added, count := c.c.reads.Added(), c.c.reads.Count()
			for _, k := range []string{"a", "a", "b", "x"} {
				c.Get(k)
			}
			c.GetMany([]string{"a", "x", "y", "c"})
			if a, n := c.c.reads.Added(), c.c.reads.Count(); a != added || n != count {
				t.Errorf("read buffer: %d queued, %d counted by Gets; want none", a-added, n-count)
			}
			c.Set("a", 10)
			c.Delete("b")
			c.SetMany(map[string]int{"d": 4, "e": 5})
			c.SetWithTTL("t", 7, time.Second)
			clk.Advance(time.Second)
			if _, ok := c.Get("t"); ok {
				t.Error("Get returned an expired entry")
			}
			if v, ok := c.Get("a"); !ok || v != 10 {
				t.Errorf("Get(a) = %v, %v; want 10, true", v, ok)
			}
			want := Stats{Sets: 7, Replaced: 1, Deleted: 1, Expired: 1, Entries: 4, Weight: 4}
			if s := c.Stats(); s != want {
				t.Errorf("Stats = %+v\n          want %+v", s, want)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 10. Allocations and benchmarks.

func TestGetAllocations(t *testing.T) {
	intKeys := []int{1, 2, 3, 4}
	strKeys := []string{"alpha", "beta", "gamma", "delta"}
	check := func(t *testing.T, name string, fn func()) {
		t.Helper()
		if a := testing.AllocsPerRun(1000, fn); a != 0 {
			t.Errorf("%s allocates %v times per call, want 0", name, a)
		}
	}
	for _, opts := range []struct {
		name      string
		max       int
		ttl       time.Duration
		withClock bool
	}{
		{"unbounded", 0, 0, false}, {"bounded", 1000, 0, false}, {"bounded TTL", 1000, time.Hour, false}, {"fake clock TTL", 0, time.Hour, true},
	} {
		t.Run(opts.name, func(t *testing.T) {
			var clk Clock
			if opts.withClock {
				clk = newFakeClock()
			}
			ci := ctNew(t, Options[int, int]{MaxEntries: opts.max, DefaultTTL: opts.ttl, Clock: clk})
			cs := ctNew(t, Options[string, int]{MaxEntries: opts.max, DefaultTTL: opts.ttl, Clock: clk})
			for i, k := range intKeys {
				ci.Set(k, i)
			}
			for i, k := range strKeys {
				cs.Set(k, i)
			}
			ci.settle()
			cs.settle()
			i := 0
			check(t, "Get hit (int key)", func() {
				if _, ok := ci.Get(intKeys[i&3]); !ok {
					panic("miss")
				}
				i++
			})
			check(t, "Get hit (string key)", func() {
				if _, ok := cs.Get(strKeys[i&3]); !ok {
					panic("miss")
				}
				i++
			})
			check(t, "Get miss (int key)", func() {
				if _, ok := ci.Get(-1); ok {
					panic("hit")
				}
			})
			missing := "no such key"
			check(t, "Get miss (string key)", func() {
				if _, ok := cs.Get(missing); ok {
					panic("hit")
				}
			})
		})
	}
}

// A Set of an existing key without a TTL replaces a word-sized value in
// place (value.go): it allocates nothing, whatever the value's size up to a
// word, bounded or not.
func TestSetInPlaceAllocations(t *testing.T) {
	for _, max := range []int{0, 1000} {
		t.Run(fmt.Sprintf("MaxEntries %d", max), func(t *testing.T) {
			ctSetInPlace(t, max, [2]int{1, 2})
			ctSetInPlace(t, max, [2]int8{-1, 7})
			ctSetInPlace(t, max, [2]ctSmallStruct{{1, 2}, {3, 4}})
			ctSetInPlace(t, max, [2]struct{}{})
			x, y := new(int), new(int)
			ctSetInPlace(t, max, [2]*int{x, y})
		})
	}
}

func ctSetInPlace[V comparable](t *testing.T, max int, vals [2]V) {
	t.Helper()
	c := ctNew(t, Options[string, V]{MaxEntries: max})
	keys := []string{"alpha", "beta", "gamma", "delta"}
	for _, k := range keys {
		c.Set(k, vals[0])
	}
	c.settle()
	i := 0
	if a := testing.AllocsPerRun(1000, func() {
		c.Set(keys[i&3], vals[i&1])
		i++
	}); a != 0 {
		t.Errorf("Set in place of a %T allocates %v times per call, want 0", vals[0], a)
	}
	for _, k := range keys {
		c.Set(k, vals[1])
		if v, ok := c.Get(k); !ok || v != vals[1] {
			t.Errorf("Get(%q) = %v, %v after an in-place Set of %v", k, v, ok, vals[1])
		}
	}
}

const ctBenchKeys = 1 << 16

func ctBenchIntKeys() []int {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]int, ctBenchKeys)
	for i := range keys {
		keys[i] = r.Int()
	}
	return keys
}

func BenchmarkGetHit(b *testing.B) {
	keys := ctBenchIntKeys()
	c, err := New(Options[int, int]{MaxEntries: ctBenchKeys})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for i, k := range keys {
		c.Set(k, i)
	}
	c.settle()
	var seeds atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seeds.Add(0x9e3779b9))
		misses := 0
		for pb.Next() {
			if _, ok := c.Get(keys[i&(ctBenchKeys-1)]); !ok {
				misses++
			}
			i++
		}
		if misses > 0 {
			b.Errorf("%d misses on a cache holding every key", misses)
		}
	})
}

func BenchmarkSet(b *testing.B) {
	keys := ctBenchIntKeys()
	c, err := New(Options[int, int]{MaxEntries: ctBenchKeys / 4})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var seeds atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seeds.Add(0x9e3779b9))
		for pb.Next() {
			c.Set(keys[i&(ctBenchKeys-1)], i)
			i++
		}
	})
}

func BenchmarkGetSetMixed(b *testing.B) {
	keys := ctBenchIntKeys()
	c, err := New(Options[int, int]{MaxEntries: ctBenchKeys / 2})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for i, k := range keys {
		c.Set(k, i)
	}
	c.settle()
	var seeds atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seeds.Add(0x9e3779b9))
		for pb.Next() {
			k := keys[i&(ctBenchKeys-1)]
			if i%8 == 0 { // 1 write in 8
				c.Set(k, i)
			} else {
				c.Get(k)
			}
			i++
		}
	})
}

// TestSpread checks the rehash of probe after contention: the multiplier
// changes and stays odd, at most once per spreadPeriod, and the counters
// stay exact across the change (Stats sums every stripe).
func TestSpread(t *testing.T) {
	c := ctNew(t, Options[int, int]{MaxEntries: 100})
	c.Set(1, 1)
	mul := func() uint64 {
		m := c.c.probeMul.Load()
		if m&1 == 0 {
			t.Fatalf("probe multiplier %#x is even", m)
		}
		return m
	}
	m0 := mul()
	c.c.spread(5)
	m1 := mul()
	if m1 == m0 {
		t.Fatal("spread did not change the probe multiplier")
	}
	c.c.spread(5 + spreadPeriod - 1)
	if mul() != m1 {
		t.Fatal("spread changed the multiplier twice within spreadPeriod")
	}
	for range 10 {
		c.Get(1)
		c.Get(2)
	}
	c.c.spread(5 + spreadPeriod)
	if mul() == m1 {
		t.Fatal("spread did not change the multiplier once spreadPeriod had passed")
	}
	for range 10 {
		c.Get(1)
		c.Get(2)
	}
	if s := c.Stats(); s.Hits != 20 || s.Misses != 20 {
		t.Fatalf("Stats %+v across spreads; want 20 hits and 20 misses", s)
	}
}

type evictReport[V any] struct {
	key   string
	value V
	cause Cause
}

// stopBeforeVictimRemoval builds an LRU cache of two entries, sets a, b and
// c to va, vb and vc, and runs the maintenance pass that evicts a up to the
// removal of its victims, which it returns with the cache and the OnEvict
// reports so far (none).
func stopBeforeVictimRemoval[V any](t *testing.T, va, vb, vc V) (*Cache[string, V], *victimBuf[string, V], *[]evictReport[V]) {
	t.Helper()
	got := new([]evictReport[V])
	h, err := New(Options[string, V]{MaxEntries: 2, Policy: "lru", OnEvict: func(k string, v V, c Cause) {
		*got = append(*got, evictReport[V]{k, v, c})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	c := h.c
	h.Set("a", va)
	h.Set("b", vb)
	// Hold the lock, so that Set("c") leaves its record queued.
	c.mu.Lock()
	h.Set("c", vc)
	c.maintainLocked() // LRU: "a" is the victim
	victims := c.takeVictims()
	c.mu.Unlock()
	if victims == nil || len(victims.vs) != 1 || victims.vs[0].e.key != "a" {
		t.Fatalf("victims %v, want a", victims)
	}
	return h, victims, got
}

// A pass takes its victims out of the index after releasing the
// maintenance lock (maintain). In between, a victim can still be read, and
// a caller that replaces or deletes it reports it instead of the pass: the
// listener hears of every value exactly once, with the cause of whoever
// took it out of the index. The test stops a pass at that point by running
// its steps itself.
func TestVictimRemovedAfterPass(t *testing.T) {
	type report = evictReport[string]
	for _, tc := range []struct {
		name  string
		race  func(h *Cache[string, string]) // runs between the pass and the removal
		want  []report
		wantA string // Get("a") afterwards; "": not found
	}{
		{"nothing", func(*Cache[string, string]) {}, []report{{"a", "1", CauseCapacity}}, ""},
		{"Set", func(h *Cache[string, string]) { h.Set("a", "10") }, []report{{"a", "1", CauseReplaced}, {"b", "2", CauseCapacity}}, "10"},
		{"Delete", func(h *Cache[string, string]) { h.Delete("a") }, []report{{"a", "1", CauseDeleted}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, victims, got := stopBeforeVictimRemoval(t, "1", "2", "3")
			if v, ok := h.Get("a"); !ok || v != "1" {
				t.Fatalf("before its removal, Get(a) = %q, %v; want 1, true", v, ok)
			}
			tc.race(h)
			h.c.report(h.c.dropVictims(victims, nil))
			h.Stats() // applies the race's record, and what it evicts
			if !slices.Equal(*got, tc.want) {
				t.Errorf("reports %v, want %v", *got, tc.want)
			}
			if v, _ := h.Get("a"); v != tc.wantA {
				t.Errorf("Get(a) = %q, want %q", v, tc.wantA)
			}
			if n := h.Len(); n > 2 {
				t.Errorf("Len %d, want at most 2", n)
			}
		})
	}
}

// A pass that drains a full write queue has about a queue's worth of
// victims; its buffer is kept for the next passes, so that evicting
// allocates nothing but the entries. Before, a buffer past a fixed 1,024
// victims (append gives 1,135 to a buffer of 1,024 victims) was thrown away by
// every such pass. Overlapping passes (one still dropping its victims when
// the next starts) each find a buffer of their own among the spares. The
// test runs the passes' steps itself, on entries that are not in the
// index, so no background pass interferes.
func TestVictimBuffersKept(t *testing.T) {
	h := ctNew(t, Options[int, int]{MaxEntries: 1 << 20})
	c := h.c
	q := c.writes.Cap()
	pass := func(first int) *victimBuf[int, int] {
		c.mu.Lock()
		defer c.mu.Unlock()
		for k := first; k < first+q; k++ {
			c.drop(newEntry[int, int](k, 0), CauseCapacity)
		}
		return c.takeVictims()
	}
	spare := func() (n, largest int) {
		for i := range c.spares {
			if vb := c.spares[i].Load(); vb != nil {
				n, largest = n+1, max(largest, cap(vb.vs))
			}
		}
		return n, largest
	}
	// Overlapping passes: each takes its victims before the others drop
	// theirs.
	var vbs []*victimBuf[int, int]
	for i := range maxSpares {
		vbs = append(vbs, pass(i*q))
	}
	for _, vb := range vbs {
		c.dropVictims(vb, nil)
	}
	if n, largest := spare(); n != maxSpares || largest < q {
		t.Fatalf("after %d passes of %d victims, %d spare buffers (largest %d), want %d (largest at least %d)",
			maxSpares, q, n, largest, maxSpares, q)
	}
	// The next passes reuse them.
	if a := testing.AllocsPerRun(10, func() {
		c.dropVictims(pass(0), nil)
	}); a != float64(q) {
		t.Errorf("a pass of %d victims allocates %v times, want %d (its entries only)", q, a, q)
	}
}

// A word-sized value is replaced in place (value.go): a Set that lands on
// a victim between the pass and the removal changes the victim's value, so
// the new value leaves with it, as if the Set had come just before the
// eviction. Each value is still reported once.
func TestVictimSetInPlace(t *testing.T) {
	h, victims, got := stopBeforeVictimRemoval(t, 1, 2, 3)
	h.Set("a", 10)
	h.c.report(h.c.dropVictims(victims, nil))
	h.Stats()
	want := []evictReport[int]{{"a", 1, CauseReplaced}, {"a", 10, CauseCapacity}}
	if !slices.Equal(*got, want) {
		t.Errorf("reports %v, want %v", *got, want)
	}
	if v, ok := h.Get("a"); ok {
		t.Errorf("Get(a) = %d, true; want not found", v)
	}
}

// TestWriteQueueSize pins the write queue's capacity: per processor for
// large caches, at most a sixteenth of a count bound for small ones.
func TestWriteQueueSize(t *testing.T) {
	for _, tc := range []struct{ maxEntries, procs, want int }{
		{0, 2, 256},           // weight-bounded or unbounded: per processor
		{100, 2, 64},          // minWriteQueue
		{1000, 2, 64},         // a sixteenth (62), rounded up by the queue
		{1000, 64, 64},        // many processors do not lengthen it
		{32768, 2, 256},       // 128 per processor
		{100_000, 2, 1024},    // a 128th (781), rounded up
		{10_000_000, 2, 1024}, // 512 per processor at most
	} {
		got := buffer.NewQueue[int](writeQueueSize(tc.maxEntries, tc.procs)).Cap()
		if got != tc.want {
			t.Errorf("writeQueueSize(%d, %d): a queue of %d, want %d", tc.maxEntries, tc.procs, got, tc.want)
		}
	}
}

// TestSketchGrowthUnderLoad fills a cache whose policy's sketch grows with
// the population (bounded at 40,000 entries, it starts sized for 2,500
// keys and doubles four times) while other goroutines read and delete:
// each growth walks the policy's queues as they change. The cache's
// bookkeeping must hold, and every key written and not deleted must be
// found or have been evicted.
func TestSketchGrowthUnderLoad(t *testing.T) {
	const max, keys = 40_000, 60_000
	var evicted sync.Map
	c := ctNew(t, Options[int, int]{MaxEntries: max, OnEvict: func(k, v int, cause Cause) {
		if cause == CauseCapacity {
			evicted.Store(k, true)
		}
	}})
	var wg sync.WaitGroup
	for w := range 2 { // writers: even and odd keys
		wg.Go(func() {
			for k := w; k < keys; k += 2 {
				c.Set(k, k)
			}
		})
	}
	wg.Go(func() { // a reader of the keys written early
		for k := 0; k < keys; k++ {
			c.Get(k / 4)
		}
	})
	wg.Go(func() { // a deleter of every seventh key
		for k := 0; k < keys; k += 7 {
			c.Delete(k)
		}
	})
	wg.Wait()
	if err := c.checkInvariants(); err != nil {
		t.Fatal(err)
	}
	// At most keys/7 deletions can have taken held keys out.
	if n := c.Len(); n > max || n < max-keys/7-1 {
		t.Fatalf("Len %d after %d keys written, bound %d", n, keys, max)
	}
	for k := range keys {
		v, ok := c.Peek(k)
		if ok && v != k {
			t.Fatalf("key %d holds %d", k, v)
		}
	}
	// A second pass over the keys: the sketch is at full width now, and a
	// key requested again must be found unless it was deleted or evicted.
	for k := range keys {
		if _, ok := c.Get(k); !ok {
			if _, gone := evicted.Load(k); !gone && k%7 != 0 {
				t.Fatalf("key %d neither found, evicted nor deleted", k)
			}
		}
	}
}

// While the background goroutine runs a slow OnEvict callback, readers keep
// the time themselves: an entry is not returned after its TTL because the
// goroutine that refreshes the cached clock is busy in user code.
func TestExpiryWhileBackgroundCallbackRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inCallback, release := make(chan struct{}), make(chan struct{})
		c := Must(Options[int, int]{OnEvict: func(k, v int, cause Cause) {
			if k == 1 {
				close(inCallback)
				<-release
			}
		}})
		defer c.Close()
		defer close(release)
		c.SetWithTTL(1, 1, time.Millisecond)
		<-inCallback // the background goroutine is reporting key 1's expiry
		c.SetWithTTL(2, 2, 50*time.Millisecond)
		time.Sleep(10 * time.Second)
		if v, ok := c.Get(2); ok {
			t.Fatalf("Get(2) = %d, true, 10s after a TTL of 50ms", v)
		}
		if _, ok := c.Peek(2); ok {
			t.Fatal("Peek returned the expired entry")
		}
	})
}

// Keys that are not equal to themselves (NaN) are refused: no Get could
// find them, and the cache could not take them out of its index again.
func TestNaNKeysRefused(t *testing.T) {
	evicted := 0
	c := Must(Options[float64, int]{MaxEntries: 10, OnEvict: func(float64, int, Cause) { evicted++ }})
	defer c.Close()
	for i := range 100 {
		if c.Set(math.NaN(), i) {
			t.Fatal("Set(NaN) reported true")
		}
	}
	type pair struct {
		a float64
		b int
	}
	cp := Must(Options[pair, int]{MaxEntries: 10})
	defer cp.Close()
	ci := Must(Options[any, int]{MaxEntries: 10})
	defer ci.Close()
	if cp.Set(pair{math.NaN(), 1}, 1) || ci.Set(math.NaN(), 1) || !ci.Set(1.5, 1) {
		t.Fatal("a key holding NaN was stored, or another refused")
	}
	c.settle()
	if c.Len() != 0 || cp.Len() != 0 || ci.Len() != 1 || evicted != 0 {
		t.Fatalf("Len %d, %d, %d, OnEvict calls %d", c.Len(), cp.Len(), ci.Len(), evicted)
	}
	if c.Set(1, 1); c.Len() != 1 {
		t.Fatal("an ordinary float key was refused")
	}
}

// A Clock that reads earlier than when the cache was made (a fake clock, a
// wall clock stepped back) still gets TTLs that expire.
func TestClockBeforeStart(t *testing.T) {
	clk := newFakeClock()
	c := Must(Options[int, int]{Clock: clk})
	defer c.Close()
	clk.Advance(-time.Second)
	c.SetWithTTL(1, 1, time.Minute)
	if d, ok := c.deadlineOf(1); !ok || d != time.Minute-time.Second {
		t.Fatalf("deadline %v, %v; want %v", d, ok, time.Minute-time.Second)
	}
	c.SetWithTTL(2, 2, time.Second) // due exactly at the cache's time 0
	if d, ok := c.deadlineOf(2); !ok || d <= 0 || d > time.Nanosecond {
		t.Fatalf("deadline %v, %v; want 1ns (0 means none)", d, ok)
	}
	clk.Advance(time.Hour)
	if _, ok := c.Get(1); ok {
		t.Fatal("the entry outlived its TTL")
	}
	if _, ok := c.Get(2); ok {
		t.Fatal("the entry due at time 0 outlived its TTL")
	}
}

// Close called while holding a lock that OnEvict takes, while the
// background goroutine is between a pass and its callbacks: Close returns
// when the callbacks start, rather than wait for a goroutine that waits
// for the caller's lock. (Polls for states that synctest cannot wait for:
// goroutines blocked on mutexes.)
func TestCloseWhileBackgroundReportsLate(t *testing.T) {
	var M sync.Mutex // the caller's lock, which OnEvict takes too
	reported := 0    // guarded by M
	entered := make(chan struct{}, 100)
	h := Must(Options[int, int]{MaxEntries: 4, OnEvict: func(k, v int, c Cause) {
		entered <- struct{}{}
		M.Lock()
		reported++
		M.Unlock()
	}})
	c := h.c
	c.mu.Lock()
	for i := range 10 {
		h.Set(i, i) // the writers' maintenance finds the lock taken
	}
	for i := range c.segs {
		c.segs[i].mu.Lock()
	}
	c.mu.Unlock()
	// The background goroutine's pass (within a second) evicts 6 entries,
	// releases c.mu and blocks dropping them from the index.
	for c.dropping.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	M.Lock() // e.g. a Shutdown method holding its struct's mutex
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	// Wait until Close has checked inCallback and waits for the goroutine.
	for {
		buf := make([]byte, 1<<20)
		s := string(buf[:runtime.Stack(buf, true)])
		found := false
		for _, g := range strings.Split(s, "\n\n") {
			if (strings.Contains(g, "[chan receive") || strings.Contains(g, "[select")) && strings.Contains(g, ").Close(") {
				found = true
			}
		}
		if found {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for i := range c.segs {
		c.segs[i].mu.Unlock()
	}
	<-entered // the background goroutine is in OnEvict, waiting for M
	select {
	case <-closed:
	case <-time.After(60 * time.Second): // a deadlock guard: a slow machine under -race
		t.Errorf("Close has not returned: it waits for the background goroutine, whose OnEvict waits for the lock Close's caller holds (deadlock)")
	}
	M.Unlock()
	<-closed
}
