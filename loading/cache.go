package loading

import (
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit"
)

// Cache is a read-through cache: Get returns the cached value of a key or
// loads it, once, however many callers ask for it at the same time. See the
// package documentation for the full contract.
//
// All methods are safe for concurrent use. A Cache must not be copied; use
// the pointer New returns, and Close it when done.
type Cache[K comparable, V any] struct {
	core   *cachekit.Cache[K, *record[V]]
	loader Loader[K, V]
	bulk   BulkLoader[K, V]

	// Lifetimes, resolved: 0 means "never ends" for ttl, notFoundTTL and
	// errorTTL; a negative errorTTL or notFoundTTL means "not cached".
	ttl, refreshAfter, maxStale time.Duration
	errorTTL, notFoundTTL       time.Duration
	loadTimeout                 time.Duration
	jitter                      float64
	rand                        func() float64 // test hook; math/rand/v2 by default
	clock                       cachekit.Clock // nil: time.Since(start)
	start                       time.Time
	margin                      time.Duration // kept in the core cache past a record's hard end
	beforeFlight                func(K)       // test hook: after a miss, before the flight table
	probe                       Prober[K, V]
	slots                       chan struct{} // background reload slots
	manyLoads                   int           // Options.MaxManyLoads
	epochMu                     sync.Mutex    // serialises ExpireAll
	epoch                       atomic.Pointer[epoch]
	clears                      atomic.Uint64 // InvalidateAll calls whose core Clear has ended
	clearing                    atomic.Int64  // InvalidateAll calls in the core's Clear
	seed                        maphash.Seed
	shards                      []shard[K, V]
	shardMask                   uint64
	stats                       counters
	lifeMu                      sync.RWMutex // orders load launches (RLock) before Close's wait (Lock)
	closed                      atomic.Bool  // written under lifeMu
	life                        context.Context
	endLife                     context.CancelCauseFunc
	loads                       sync.WaitGroup // load goroutines
	closeOnce                   sync.Once
}

// shard is one part of the flight table: the loads in flight for its keys.
// Its lock also orders every store of a key's record (by a finishing load,
// Set) against Delete and InvalidateAll, so that a load that a Delete
// overtook never stores its result.
type shard[K comparable, V any] struct {
	mu      sync.Mutex
	flights map[K]*flight[K, V] // guarded by mu
	_       [48]byte
}

// register enters f in the table of flights, where later loads of its key
// join it. A key not equal to itself (a floating-point NaN, or a struct,
// array or interface holding one) is not entered: no lookup could find
// it, nor take it out again, so each would stay for good. Such a key is
// loaded by each caller on its own. The caller holds sh.mu.
func (sh *shard[K, V]) register(f *flight[K, V]) {
	if f.key == f.key {
		sh.flights[f.key] = f
	}
}

// New returns a cache configured by opts, or an error wrapping
// cachekit.ErrInvalidOptions that names the offending option.
func New[K comparable, V any](opts Options[K, V]) (*Cache[K, V], error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c := &Cache[K, V]{
		loader:       opts.Loader,
		bulk:         opts.BulkLoader,
		ttl:          opts.TTL,
		refreshAfter: opts.RefreshAfter,
		maxStale:     opts.MaxStale,
		errorTTL:     opts.ErrorTTL,
		notFoundTTL:  opts.NotFoundTTL,
		loadTimeout:  opts.LoadTimeout,
		jitter:       opts.TTLJitter,
		rand:         rand.Float64,
		clock:        opts.Clock,
		probe:        opts.Probe,
		seed:         maphash.MakeSeed(),
	}
	if c.errorTTL == 0 {
		c.errorTTL = DefaultErrorTTL
	}
	if c.notFoundTTL == 0 {
		c.notFoundTTL = c.ttl // 0: never ends
	}
	if c.loadTimeout == 0 {
		c.loadTimeout = DefaultLoadTimeout
	}
	n := opts.MaxConcurrentRefreshes
	if n == 0 {
		n = DefaultMaxConcurrentRefreshes
	}
	c.slots = make(chan struct{}, n)
	c.manyLoads = cmp.Or(opts.MaxManyLoads, DefaultMaxManyLoads)
	if c.clock == nil {
		// The core cache reads a cached clock that may lag ours by about a
		// millisecond (more on a starved machine): keep records in it a
		// little past their end, so it never drops one early. Records are
		// judged by our own clock (view), never by their presence alone.
		c.margin = time.Second
		c.start = time.Now()
	} else {
		start, err := readClock(c.clock)
		if err != nil {
			return nil, fmt.Errorf("loading: %w: Clock %T: %w", cachekit.ErrInvalidOptions, c.clock, err)
		}
		c.start = start
	}
	var weigher func(K, *record[V]) uint32
	if w := opts.Weigher; w != nil {
		weigher = func(k K, r *record[V]) uint32 {
			if !r.hasValue {
				return 1
			}
			return w(k, r.value)
		}
	}
	core, err := cachekit.New(cachekit.Options[K, *record[V]]{
		MaxEntries:      opts.MaxEntries,
		MaxWeight:       opts.MaxWeight,
		Weigher:         weigher,
		Policy:          opts.Policy,
		InitialCapacity: opts.InitialCapacity,
		Clock:           opts.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	c.core = core
	nshards := 16
	for nshards < 4*runtime.GOMAXPROCS(0) && nshards < 256 {
		nshards <<= 1
	}
	c.shards = make([]shard[K, V], nshards)
	for i := range c.shards {
		c.shards[i].flights = make(map[K]*flight[K, V])
	}
	c.shardMask = uint64(nshards - 1)
	c.epoch.Store(&epoch{})
	c.life, c.endLife = context.WithCancelCause(context.Background())
	return c, nil
}

// Must is like New but panics if the options are invalid.
func Must[K comparable, V any](opts Options[K, V]) *Cache[K, V] {
	c, err := New(opts)
	if err != nil {
		panic(err)
	}
	return c
}

// readClock returns clock's reading, or its panic as an error: New's first
// reading finds a Clock that cannot be read (a nil pointer of a clock
// type in the interface, say) before a load's goroutine would.
func readClock(clock cachekit.Clock) (t time.Time, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("its Now panicked: %v", r)
		}
	}()
	return clock.Now(), nil
}

// now returns the cache's time in nanoseconds since it was created.
func (c *Cache[K, V]) now() int64 {
	if c.clock != nil {
		return int64(c.clock.Now().Sub(c.start))
	}
	return int64(time.Since(c.start))
}

func (c *Cache[K, V]) shard(key K) *shard[K, V] {
	return &c.shards[maphash.Comparable(c.seed, key)&c.shardMask]
}

// Get returns key's value: from the cache when it holds a fresh one;
// otherwise it waits for a load of the key, starting one unless one is
// already in flight, and returns its result.
//
//   - A fresh value comes with a nil error. If it is older than
//     RefreshAfter, Get also starts one background reload.
//   - A stale value (past TTL within MaxStale, or after ExpireAll) comes
//     with an error for which errors.Is(err, ErrStale) holds; Get starts one
//     background reload, and never waits for it.
//   - A remembered failure or not-found answer is returned as the error,
//     without calling the loader (ErrorTTL, NotFoundTTL).
//   - If ctx ends while Get waits, Get returns ctx.Err() at once; the load
//     goes on for the other callers and its result is cached. A Get whose
//     ctx has already ended starts no load (it still joins one in flight
//     and reads the cache).
//
// Get returns ErrReentrant if called by a loader for a key its own call
// chain is loading, and ErrClosed after Close. A nil ctx is an error: Get
// returns one at once, without looking the key up (no lookup is counted
// in Stats) or starting a load.
func (c *Cache[K, V]) Get(ctx context.Context, key K) (V, error) {
	if ctx == nil {
		var zero V
		return zero, errNilContext
	}
	if c.closed.Load() {
		var zero V
		return zero, ErrClosed
	}
	if r, ok := c.core.Get(key); ok {
		st, due := c.view(r, c.now(), c.epoch.Load())
		if st != unusable {
			return c.answer(ctx, key, r, st, due, true)
		}
		c.stats.unusable.Add(1)
	}
	return c.load(ctx, key)
}

// answer returns what r answers in state st, starting a background reload
// if due. first says whether r came from the lookup that Stats counts.
func (c *Cache[K, V]) answer(ctx context.Context, key K, r *record[V], st state, due bool, first bool) (V, error) {
	// A caller whose context has ended starts no load, background or not.
	if due && ctx.Err() == nil && !r.refreshing.Load() && r.refreshing.CompareAndSwap(false, true) {
		c.refresh(ctx, key, r)
	}
	switch st {
	case fresh:
		return r.value, nil
	case stale:
		if first {
			c.stats.staleHits.Add(1)
		}
		return r.value, r.staleErr
	default:
		if first {
			c.stats.errorHits.Add(1)
		}
		var zero V
		return zero, r.err
	}
}

// load joins the flight for key, or starts one, and waits for it.
func (c *Cache[K, V]) load(ctx context.Context, key K) (V, error) {
	var zero V
	if chainOf[K, V](ctx, c).has(key) {
		c.stats.noWait.Add(1)
		return zero, ErrReentrant
	}
	if c.beforeFlight != nil {
		c.beforeFlight(key)
	}
	sh := c.shard(key)
	sh.mu.Lock()
	if f := c.joinable(ctx, sh, key); f != nil {
		f.waitable()
		sh.mu.Unlock()
		if err := c.joined(ctx, f); err != nil {
			return zero, err
		}
		f.startDeferred() // we wait for it: it must not wait for a turn
		return c.wait(ctx, f)
	}
	// Check the cache again, now that no load of the key can finish
	// behind our back: a load that ended since our lookup stored its
	// result before leaving the table, and a Set stored its value.
	prev, st, due := c.recheck(sh, key)
	if st != unusable {
		sh.mu.Unlock()
		return c.answer(ctx, key, prev, st, due, false)
	}
	if err := ctx.Err(); err != nil {
		// A caller that has already given up starts no load.
		sh.mu.Unlock()
		c.stats.noWait.Add(1)
		return zero, err
	}
	f := c.newFlight(key, sh, prev, c.probe == nil)
	sh.register(f)
	sh.mu.Unlock()
	if c.probe != nil {
		next, v, ttl, found, now := c.runProbe(ctx, f)
		if found {
			c.finish(f, outcome[V]{value: v, kind: loaded, limit: max(ttl, 0), limited: ttl >= 0}, now)
			return f.value, f.err
		}
		sh.mu.Lock()
		f.waitable() // not finished: only the load launched below finishes it
		sh.mu.Unlock()
		// The load starts from the probe's context; the caller still
		// waits on its own.
		c.launch(next, []*flight[K, V]{f}, false)
		return c.wait(ctx, f)
	}
	c.launch(ctx, []*flight[K, V]{f}, false)
	return c.wait(ctx, f)
}

// joined counts a lookup that has joined f, a load in flight, as shared;
// unless ctx has already ended and f has not finished: then the lookup
// fails at once, counted as such (no miss, see Stats), and joined returns
// ctx's error. The caller made f waitable.
func (c *Cache[K, V]) joined(ctx context.Context, f *flight[K, V]) error {
	if err := ctx.Err(); err != nil {
		select {
		case <-f.done:
		default:
			c.stats.noWait.Add(1)
			return err
		}
	}
	c.stats.shared.Add(1)
	return nil
}

// recheck looks key up again for a caller that holds sh.mu: its record, if
// any, and what that answers now (unusable without a record). It reads the
// Clock: if that panics, recheck unlocks sh.mu as the panic unwinds, so
// that a caller recovering the panic (as net/http recovers a handler's)
// does not leave the shard locked for good, and every later miss of its
// keys waiting for it.
func (c *Cache[K, V]) recheck(sh *shard[K, V], key K) (prev *record[V], st state, due bool) {
	returned := false
	defer func() {
		if !returned {
			sh.mu.Unlock()
		}
	}()
	if prev, _ = c.core.Peek(key); prev != nil {
		st, due = c.view(prev, c.now(), c.epoch.Load())
	}
	returned = true
	return prev, st, due
}

// runProbe asks the Prober about f's key, turning a panic into not found.
// If the Prober calls runtime.Goexit, the caller's goroutine cannot go on
// to load: runProbe fails f with a *PanicError as the goroutine unwinds,
// so that the key's other callers do not wait for a load nobody runs.
// With a found value it also reads the time to store it at (now): a
// Clock's panic there counts as the probe's, and f is loaded, instead of
// leaving f in the table with nobody to finish it.
func (c *Cache[K, V]) runProbe(ctx context.Context, f *flight[K, V]) (next context.Context, v V, ttl time.Duration, found bool, now int64) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if p := recover(); p != nil {
			var zero V
			next, v, found = ctx, zero, false
			return
		}
		// Nothing is stored for a Goexit: no time is needed (and no
		// Clock's panic can leave f unfinished).
		pe := &PanicError{Goexit: true, Stack: debug.Stack()}
		c.finish(f, outcome[V]{kind: abandoned, err: pe}, 0)
	}()
	// The probe's context names f's key as being loaded by this call
	// chain, as a loader's does: a probe that asks the cache for it
	// (directly, or through a load it waits for) gets ErrReentrant
	// instead of waiting for itself, with the key's other callers behind
	// it, until its context ends.
	pctx := &f.probeCtx
	*pctx = probeContext[K, V]{Context: ctx, c: c, self: [1]*flight[K, V]{f}}
	pctx.ch = chain[K, V]{flights: pctx.self[:], parent: chainOf(ctx, c)}
	next, v, ttl, found = c.probe.Probe(pctx, f.key)
	if found {
		now = c.now()
	}
	returned = true
	if next == nil {
		next = ctx
	}
	return next, v, ttl, found, now
}

// wait returns f's result, or ctx.Err() if ctx ends first.
func (c *Cache[K, V]) wait(ctx context.Context, f *flight[K, V]) (V, error) {
	select {
	case <-f.done:
		return f.value, f.err
	default:
	}
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// refresh starts a background reload of key from r, whose refreshing flag
// the caller has just claimed.
func (c *Cache[K, V]) refresh(ctx context.Context, key K, r *record[V]) {
	if c.closed.Load() {
		r.refreshing.Store(false)
		return
	}
	if !c.acquireSlot() {
		r.refreshing.Store(false)
		c.stats.refreshSkips.Add(1)
		return
	}
	// refreshFlight reads the Clock (the core's Peek): if that panics,
	// the slot and the claim are given back as the panic unwinds, or the
	// slot (and the key's reloads) would stay taken for good.
	returned := false
	defer func() {
		if !returned {
			<-c.slots
			r.refreshing.Store(false)
		}
	}()
	f := c.refreshFlight(key, r)
	returned = true
	if f == nil {
		<-c.slots
		return
	}
	c.launch(ctx, []*flight[K, V]{f}, true)
}

// refreshFlight registers a background flight for key, reloading r, unless
// a load of key is already in flight (it clears the flag when it ends) or r
// is no longer key's record.
func (c *Cache[K, V]) refreshFlight(key K, r *record[V]) *flight[K, V] {
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.flights[key] != nil {
		return nil
	}
	if cur, ok := c.core.Peek(key); !ok || cur != r {
		return nil
	}
	f := c.newFlight(key, sh, r, false)
	sh.register(f)
	return f
}

func (c *Cache[K, V]) acquireSlot() bool {
	select {
	case c.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Set stores value for key as freshly loaded (TTL, RefreshAfter and jitter
// apply). A load of key in flight when Set is called still gives its result
// to its waiters but does not store it. Set reports false, and removes the
// key, when the value alone weighs more than MaxWeight; it does nothing and
// returns false after Close.
func (c *Cache[K, V]) Set(key K, value V) bool {
	if c.closed.Load() {
		return false
	}
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	now := c.now()
	ok := c.put(key, c.valueRecord(value, now, c.epoch.Load().gen), now) != nil
	// Overtake only once put has returned: a Set whose Weigher (or
	// Clock) panics stores nothing, and must not throw the load's result
	// away either. (Both happen under the shard lock, so no load can
	// finish in between.)
	c.overtake(sh, key)
	return ok
}

// Delete removes key. A load of key in flight when Delete is called still
// gives its result to its waiters but does not store it, and the next Get
// loads the key again.
func (c *Cache[K, V]) Delete(key K) {
	sh := c.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c.overtake(sh, key)
	c.core.Delete(key)
}

// joinable returns key's flight in flight, if a caller that misses the key
// now may wait for it. A flight that began before the latest ExpireAll may
// have read the source before it: its result is stored as stale, and a
// caller that missed after the ExpireAll must not get it as fresh, so the
// flight is overtaken (its own waiters still get its result) and the
// caller starts a new one. The caller holds sh.mu.
func (c *Cache[K, V]) joinable(ctx context.Context, sh *shard[K, V], key K) *flight[K, V] {
	f := sh.flights[key]
	// A caller whose context has ended starts no load: it must not
	// overtake (and so discard) the one in flight either.
	if f != nil && ctx.Err() == nil && f.gen < c.epoch.Load().gen {
		c.overtake(sh, key)
		return nil
	}
	return f
}

// overtake stops key's flight, if any, from storing its result, and takes it
// out of the table so that later callers start a new load. The caller holds
// sh.mu.
func (c *Cache[K, V]) overtake(sh *shard[K, V], key K) {
	if f := sh.flights[key]; f != nil {
		f.discard = true
		delete(sh.flights, key)
	}
}

// ExpireAll makes every cached value stale, as if its TTL had ended now,
// without removing anything: with MaxStale set, reads keep getting the old
// values (marked stale) for up to MaxStale while each key is reloaded in the
// background, once, on its first read. This is the gentle invalidation for a
// cache under load. Without MaxStale the next Get of each key waits for a
// load. Remembered errors and not-found answers are forgotten. A load in
// flight during ExpireAll stores its result as already stale; a Get that
// misses the key after ExpireAll does not wait for that load (it may have
// read the source before the change) but starts a new one, whose result
// wins.
//
// ExpireAll never lengthens a value's life: a value's stale window is
// MaxStale from the first ExpireAll after its load began (or from the end
// of its TTL, if that came first), however many calls follow. A later
// call does not bring back a value whose window has ended (nor, after a
// failed reload, one whose failure Get was returning: that failure is
// forgotten and the next Get loads). ExpireAll remembers at most its last
// 1024 calls within MaxStale: a value loaded before all of them is past
// its stale window.
func (c *Cache[K, V]) ExpireAll() {
	c.epochMu.Lock()
	defer c.epochMu.Unlock()
	c.epoch.Store(c.epoch.Load().next(c.now(), c.maxStale))
}

// InvalidateAll removes every entry (cachekit.Cache.Clear). Loads in flight
// when it is called give their results to their waiters but do not store
// them. Under load prefer ExpireAll: every key's next read then waits for
// the source.
func (c *Cache[K, V]) InvalidateAll() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		for _, f := range sh.flights {
			f.discard = true
		}
		clear(sh.flights)
		sh.mu.Unlock()
	}
	// The clear holds no shard lock: a failed reload that kept its
	// previous value finds a clear running or ended if one may have run
	// between its check and its store (see clearRaced).
	c.clearing.Add(1)
	defer c.clearing.Add(-1)
	c.core.Clear()
	c.clears.Add(1)
}

// clearMark is what a store reads of InvalidateAll's clears before its
// check that a key's record is still current.
type clearMark struct {
	ended   uint64
	running bool
}

// markClears returns the clears' state before a check.
func (c *Cache[K, V]) markClears() clearMark {
	return clearMark{ended: c.clears.Load(), running: c.clearing.Load() > 0}
}

// clearRaced reports whether a core Clear may have run between m and now:
// one was running at m, is running now, or ended meanwhile. (A count
// bumped before the clear alone missed one that began before m and ran
// after the check.)
func (c *Cache[K, V]) clearRaced(m clearMark) bool {
	return m.running || c.clearing.Load() > 0 || c.clears.Load() != m.ended
}

// Close cancels the contexts of the loads in flight (foreground and
// background), waits for the loaders to return, and closes the underlying
// cache. Callers waiting for a cancelled load get an error wrapping
// ErrClosed (or the value, if the loader still returned one). After Close,
// Get and GetMany return ErrClosed and Set does nothing. Close is idempotent;
// it must not be called from a loader (it would wait for itself).
func (c *Cache[K, V]) Close() {
	c.closeOnce.Do(func() {
		c.lifeMu.Lock()
		c.closed.Store(true)
		c.lifeMu.Unlock()
		c.endLife(ErrClosed)
		c.loads.Wait()
		c.core.Close()
	})
}

// valueRecord returns a record for value, loaded at now in generation gen.
func (c *Cache[K, V]) valueRecord(value V, now int64, gen uint64) *record[V] {
	f := c.factor()
	r := &record[V]{
		value:    value,
		hasValue: true,
		gen:      gen,
		loadGen:  gen,
		loadedAt: now,
		staleErr: ErrStale,
	}
	r.freshUntil = lifetime(now, c.ttl, f)
	r.staleUntil = satAdd(r.freshUntil, c.maxStale)
	r.nextLoad = r.freshUntil
	if c.refreshAfter > 0 {
		r.nextLoad = lifetime(now, c.refreshAfter, f)
	}
	return r
}

// put stores r for key in the core cache until r's hard end (plus margin).
// If the core refuses it (too heavy), the key's previous record is removed
// so that it is not served in place of the newer value. The caller holds
// key's shard lock.
func (c *Cache[K, V]) put(key K, r *record[V], now int64) *record[V] {
	var ttl time.Duration
	if end := r.hardEnd(); end != never && (now >= 0 || end <= never+now) {
		if d := time.Duration(end - now); d <= math.MaxInt64-c.margin {
			ttl = max(d+c.margin, 1)
		} // else: beyond any Duration, which for the core is never
	}
	if !c.core.SetWithTTL(key, r, ttl) {
		c.core.Delete(key)
		return nil
	}
	return r
}

// factor returns the jitter factor of one load: uniform in 1 ± jitter/2.
func (c *Cache[K, V]) factor() float64 {
	if c.jitter == 0 {
		return 1
	}
	return 1 + c.jitter*(c.rand()-0.5)
}

// errorFactor returns a random factor for a remembered failure's
// lifetime: uniform in [1, 1 + TTLJitter], so that jitter spreads the
// retries of keys that failed together without ever bringing one before
// ErrorTTL (a failing source sees at most one call per key per ErrorTTL).
func (c *Cache[K, V]) errorFactor() float64 {
	if c.jitter == 0 {
		return 1
	}
	return 1 + c.jitter*c.rand()
}

// lifetime returns the end of a lifetime d (scaled by f) starting at now;
// never if d is zero.
func lifetime(now int64, d time.Duration, f float64) int64 {
	if d <= 0 {
		return never
	}
	if f == 1 {
		// Without jitter the end is exact: a float64 holds a Duration
		// past 2^53 ns (104 days) only to within a few nanoseconds.
		if int64(d) == never || now > 0 && int64(d) >= never-now {
			return never
		}
		return now + int64(d)
	}
	x := float64(d) * f
	// now is negative when a Clock reads earlier than the cache's start:
	// never-now would overflow there.
	if x >= float64(never) || (now > 0 && x >= float64(never-now)) {
		return never
	}
	return now + max(int64(x), 1)
}
