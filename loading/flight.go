package loading

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// flight is one key's load in progress. It stays in its shard's table
// from its start until it finishes (or a Delete, Set or InvalidateAll
// overtakes it); callers that miss the key meanwhile wait on done instead
// of loading again. Several flights may share one loader call (GetMany,
// a bulk refresh).
type flight[K comparable, V any] struct {
	key     K
	sh      *shard[K, V] // key's shard
	prev    *record[V]   // the key's record when the flight started, or nil
	gen     uint64       // epoch generation when the flight started
	discard bool         // overtaken: do not store the result; guarded by the shard lock

	// done is closed when value and err are set. It is made by the first
	// caller that waits (waitable), so a flight that nobody waits for (a
	// probe's hit) costs no channel; it is set under the shard lock while
	// the flight is in the table, and read under it by finish.
	done  chan struct{}
	value V
	err   error

	// over is set when the flight finishes: a call chain that holds it no
	// longer counts it as a key being loaded (see chain.has).
	over atomic.Bool

	// deferred, while set, launches the flight, which a GetMany queued
	// behind its first MaxManyLoads (launchEach). Whoever takes it first
	// launches it: launchEach's goroutine in its turn, or a caller that
	// joins the flight (startDeferred), which must not wait for a turn
	// that may never come: it may be a loader of that very GetMany.
	deferred atomic.Pointer[func()]

	// onDone, if set, is called once f has finished (after done is
	// closed): launchEach counts the finished loads of a GetMany that
	// were launched in their turn with it. Set before f is launched.
	onDone func()

	// probeCtx is the context of the Prober's call for f (runProbe),
	// kept in the flight so that marking the key costs a cold read no
	// allocation.
	probeCtx probeContext[K, V]
}

// probeContext is a Prober's context: its caller's, naming the key being
// probed as loaded by this call chain (see chain), as a loader's context
// does, so that a Prober asking the cache for that key gets ErrReentrant
// instead of waiting for itself. It is context.WithValue with the chain's
// storage in the flight.
type probeContext[K comparable, V any] struct {
	context.Context
	c    *Cache[K, V]
	self [1]*flight[K, V]
	ch   chain[K, V]
}

func (p *probeContext[K, V]) Value(key any) any {
	if k, ok := key.(chainKey[K, V]); ok && k.c == p.c {
		return &p.ch
	}
	return p.Context.Value(key)
}

// startDeferred launches f now if a GetMany queued it and it is not
// launched yet.
func (f *flight[K, V]) startDeferred() {
	if start := f.deferred.Swap(nil); start != nil {
		(*start)()
	}
}

// newFlight returns a flight for key, in shard sh, to be put in the table;
// waited says whether its starter will wait for it (otherwise done is
// made by the first waiter, waitable).
func (c *Cache[K, V]) newFlight(key K, sh *shard[K, V], prev *record[V], waited bool) *flight[K, V] {
	f := &flight[K, V]{
		key:  key,
		sh:   sh,
		prev: prev,
		gen:  c.epoch.Load().gen,
	}
	if waited {
		f.done = make(chan struct{})
	}
	return f
}

// waitable makes f's done channel if nobody has yet, so that the caller
// can wait for it. The caller holds f's shard lock, and found f in the
// table (or made it): finish has not taken it out yet.
func (f *flight[K, V]) waitable() {
	if f.done == nil {
		f.done = make(chan struct{})
	}
}

// chain is the set of keys that a call chain is loading: a loader's context
// carries the keys of its own call and, through parent, those of the loads
// that (directly or not) called it. A load can outlive the call that
// started it (a background reload started from a loader's Get, or a load
// whose starter gave up waiting): its chain then still names the caller's
// keys, whose loads have finished, and has skips those, so that only a key
// still being loaded up the chain makes a Get fail with ErrReentrant.
type chain[K comparable, V any] struct {
	flights []*flight[K, V]
	parent  *chain[K, V]
}

// chainKey is the context key of a cache's chain.
type chainKey[K comparable, V any] struct{ c *Cache[K, V] }

func (chainKey[K, V]) chain() {}

// anyChainKey is a chainKey of any cache.
type anyChainKey interface{ chain() }

// withoutChains is a context that hides the chains of every cache in its
// parent, for a background reload: its loader starts new chains.
type withoutChains struct{ context.Context }

func (w withoutChains) Value(key any) any {
	if _, ok := key.(anyChainKey); ok {
		return nil
	}
	return w.Context.Value(key)
}

func chainOf[K comparable, V any](ctx context.Context, c *Cache[K, V]) *chain[K, V] {
	ch, _ := ctx.Value(chainKey[K, V]{c}).(*chain[K, V])
	return ch
}

func (ch *chain[K, V]) has(key K) bool {
	for ; ch != nil; ch = ch.parent {
		for _, f := range ch.flights {
			if f.key == key && !f.over.Load() {
				return true
			}
		}
	}
	return false
}

// launch runs one loader call for the registered flights fl on a new
// goroutine. slot says that the caller holds a background slot, which the
// call releases when it ends. After Close it fails fl with ErrClosed.
func (c *Cache[K, V]) launch(ctx context.Context, fl []*flight[K, V], slot bool) {
	c.lifeMu.RLock()
	if c.closed.Load() {
		c.lifeMu.RUnlock()
		// Nothing is stored after Close: no time is needed (and no
		// Clock's panic can leave fl unfinished).
		for _, f := range fl {
			c.finish(f, outcome[V]{kind: abandoned, err: ErrClosed}, 0)
		}
		if slot {
			<-c.slots
		}
		return
	}
	c.loads.Add(1)
	c.lifeMu.RUnlock()
	if slot {
		// Counted here, once the reload is sure to run: Close may have
		// come since it was registered.
		c.stats.refreshes.Add(uint64(len(fl)))
	}

	// The load keeps the values of the context of the caller that started
	// it, not its cancellation: the caller may leave, others are waiting.
	lctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(c.life, func() { cancel(ErrClosed) })
	cancelTimeout := context.CancelFunc(func() {})
	if c.loadTimeout > 0 {
		lctx, cancelTimeout = context.WithTimeout(lctx, c.loadTimeout)
	}
	// A load's chain continues its caller's, so that a loader asking for
	// a key its own chain is loading fails instead of waiting for itself.
	// A background reload starts a chain of its own: nobody waits for it,
	// so its loader waiting for a key of its starter's chain is no cycle
	// (ErrReentrant there was a false failure, cached for ErrorTTL).
	// Its loader may call other caches too: their chains are dropped as
	// well (a reload of Y started by X's loader got ErrReentrant from X for
	// the key X's load, which does not wait for the reload, was loading).
	var parent *chain[K, V]
	if !slot {
		parent = chainOf(ctx, c)
	} else {
		lctx = withoutChains{lctx}
	}
	lctx = context.WithValue(lctx, chainKey[K, V]{c}, &chain[K, V]{flights: fl, parent: parent})
	lim := new(ttlLimit)
	lctx = context.WithValue(lctx, ttlLimitKey{}, lim)
	go c.run(lctx, fl, slot, lim, func() {
		stop()
		cancelTimeout()
		cancel(nil)
	})
}

// outcome is the result of a load for one key.
type outcome[V any] struct {
	value   V
	err     error
	kind    outcomeKind
	limit   time.Duration // with limited: LimitTTL's bound on a loaded value's TTL
	limited bool
}

type outcomeKind uint8

const (
	loaded    outcomeKind = iota // value
	notFound                     // err wraps ErrNotFound
	failed                       // err: remembered for ErrorTTL
	abandoned                    // panic, Goexit, Close: err, nothing stored
)

// run calls the loader for fl and finishes every flight with its outcome,
// whatever the loader does: return, panic or runtime.Goexit.
func (c *Cache[K, V]) run(ctx context.Context, fl []*flight[K, V], slot bool, lim *ttlLimit, release func()) {
	defer c.loads.Done()
	if slot {
		defer func() { <-c.slots }()
	}
	defer release()
	start := c.now()
	returned := false
	finished := 0 // flights of fl finished after the loader returned
	defer func() {
		if returned {
			// Past here, only a Goexit while storing a result unwinds
			// (finish recovers panics): storeSafely failed that flight;
			// fail those after it too, or their waiters wait forever.
			if finished+1 < len(fl) {
				pe := &PanicError{Goexit: true, Storing: true, Stack: debug.Stack()}
				now := c.now()
				for _, f := range fl[finished+1:] {
					c.finish(f, outcome[V]{kind: abandoned, err: pe}, now)
				}
			}
			return
		}
		// The loader panicked (recover returns its value) or called
		// runtime.Goexit (recover returns nil: since Go 1.21 panic(nil)
		// panics with a *runtime.PanicNilError). The stack is still the
		// loader's: deferred calls run before it unwinds.
		v := recover()
		pe := &PanicError{Value: v, Goexit: v == nil, Stack: debug.Stack()}
		now := c.now()
		c.countLoad(start, now, true)
		for _, f := range fl {
			c.finish(f, outcome[V]{kind: abandoned, err: pe}, now)
		}
	}()
	if len(fl) == 1 && c.loader != nil {
		v, err := c.loader.Load(ctx, fl[0].key)
		now := c.now()
		// Classifying runs the loader's code too (its error's Is and
		// Unwrap methods): a panic there fails the waiters as the
		// loader's own would, instead of ending the program.
		o := c.classify(ctx, v, err)
		returned = true
		o.limit, o.limited = lim.get()
		c.countLoad(start, now, o.kind == failed || o.kind == abandoned)
		c.finish(fl[0], o, now)
		return
	}
	keys := make([]K, len(fl))
	for i, f := range fl {
		keys[i] = f.key
	}
	m, err := c.bulk.LoadMany(ctx, keys)
	now := c.now()
	// A *BulkError, alone or wrapped (fmt.Errorf's %w), gives per-key
	// errors and leaves the keys it does not name not found. Joined with
	// other errors (errors.Join), its keys still get their own errors,
	// but the others fail with the whole error: it says more went wrong.
	var be *BulkError[K]
	whole := err
	if err != nil && errors.As(err, &be) && onlyBulk(err, be) {
		whole = nil
	}
	failure := false
	outs := make([]outcome[V], len(fl))
	for i, f := range fl {
		var zero V
		switch v, ok := m[f.key]; {
		case ok:
			outs[i] = outcome[V]{value: v, kind: loaded}
		case be != nil && be.Errors[f.key] != nil:
			outs[i] = c.classify(ctx, zero, be.Errors[f.key])
		case whole != nil && be != nil && !isBeside(whole, be, ErrNotFound):
			// A per-key ErrNotFound in be is its key's answer, not the
			// whole call's: classify's errors.Is would see it through
			// the join, and fail the other keys as not found.
			outs[i] = c.failure(ctx, whole)
		case whole != nil:
			outs[i] = c.classify(ctx, zero, whole)
		default:
			outs[i] = outcome[V]{err: ErrNotFound, kind: notFound}
		}
		outs[i].limit, outs[i].limited = lim.get()
		failure = failure || outs[i].kind == failed || outs[i].kind == abandoned
	}
	returned = true // as in the single-key case: classifying runs loader code
	c.countLoad(start, now, failure)
	for i, f := range fl {
		c.finish(f, outs[i], now)
		finished++
	}
}

// onlyBulk reports whether err is be, or wraps be through errors that
// each wrap just one error (so that be is all that err reports).
func onlyBulk[K comparable](err error, be *BulkError[K]) bool {
	for err != nil {
		if e, ok := err.(*BulkError[K]); ok && e == be {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// isBeside reports whether err is target, or wraps it, as errors.Is does,
// without looking into skip (which err may wrap).
func isBeside(err, skip, target error) bool {
	if err == nil || err == skip {
		return false
	}
	if err == target {
		return true
	}
	if x, ok := err.(interface{ Is(error) bool }); ok && x.Is(target) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return isBeside(u.Unwrap(), skip, target)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if isBeside(e, skip, target) {
				return true
			}
		}
	}
	return false
}

// classify sorts a loader's result.
func (c *Cache[K, V]) classify(ctx context.Context, v V, err error) outcome[V] {
	switch {
	case err == nil:
		return outcome[V]{value: v, kind: loaded}
	case errors.Is(err, ErrNotFound):
		return outcome[V]{err: err, kind: notFound}
	}
	return c.failure(ctx, err)
}

// failure sorts a loader's error that does not say "not found": a failure,
// or the end of a load abandoned by Close.
func (c *Cache[K, V]) failure(ctx context.Context, err error) outcome[V] {
	switch {
	case c.closed.Load() && context.Cause(ctx) == ErrClosed:
		return outcome[V]{err: fmt.Errorf("%w (the load ended with: %w)", ErrClosed, err), kind: abandoned}
	case ctx.Err() == context.DeadlineExceeded && errors.Is(err, context.DeadlineExceeded):
		// Say whose deadline it was: callers see this error later, from
		// the cache, when their own contexts are fine.
		err = fmt.Errorf("loading: load timed out after %v: %w", c.loadTimeout, err)
	case ctx.Err() == context.DeadlineExceeded:
		// The loader ended after LoadTimeout with an error of its own (a
		// driver's timeout, an RPC status) that does not wrap the
		// context's: the load ended by the timeout all the same.
		err = fmt.Errorf("loading: load timed out after %v: %w (the loader returned: %w)", c.loadTimeout, context.DeadlineExceeded, err)
	}
	return outcome[V]{err: err, kind: failed}
}

func (c *Cache[K, V]) countLoad(start, now int64, failed bool) {
	c.stats.loads.Add(1)
	c.stats.loadNanos.Add(uint64(max(now-start, 0)))
	if failed {
		c.stats.loadErrors.Add(1)
	}
}

// finish takes f out of the table, stores its outcome unless f was
// overtaken (Delete, Set, InvalidateAll) or the cache is closed, and hands
// the outcome to f's waiters. Storing before waking them means that a
// waiter's next Get finds the result.
//
// Storing runs user code (the Weigher), often on a load goroutine that no
// caller owns: if it panics or calls runtime.Goexit, nothing is stored,
// and the waiters get a *PanicError instead of the outcome (a panic would
// otherwise end the program, and the shard would stay locked).
func (c *Cache[K, V]) finish(f *flight[K, V], o outcome[V], now int64) {
	f.over.Store(true)
	sh := f.sh
	sh.mu.Lock()
	if sh.flights[f.key] == f {
		delete(sh.flights, f.key)
	}
	var stored *record[V]
	if !f.discard && !c.closed.Load() {
		var pe *PanicError
		stored, pe = c.storeSafely(f, o, now)
		if pe != nil {
			o = outcome[V]{kind: abandoned, err: pe}
		}
	}
	c.deliver(f, o, stored)
}

// deliver ends finish: it unlocks f's shard, which the caller holds with f
// out of the table, and hands o to f's waiters. stored is the record
// finish stored, if any.
//
// The core's Peek reads the Clock: if that panics (on the caller's
// goroutine of a Prober's hit or of a launch after Close, where the
// panic may be recovered), the shard is still unlocked and o handed to
// the waiters as the panic unwinds.
func (c *Cache[K, V]) deliver(f *flight[K, V], o outcome[V], stored *record[V]) {
	defer func() {
		done := f.done // no waiter can come any more: f is out of the table
		f.sh.mu.Unlock()
		f.value, f.err = o.value, o.err
		if done != nil {
			close(done)
		}
		if f.onDone != nil {
			f.onDone()
		}
	}()
	// Whatever record the key has now may have had its reload claimed
	// by a reader that found this flight running: let the next reader
	// claim it again. (A record just stored is new: nobody claimed it.)
	if stored == nil {
		if cur, ok := c.core.Peek(f.key); ok {
			cur.refreshing.Store(false)
		}
	}
}

// storeSafely is store, recovering from a panic in the user code it runs
// (returned as a *PanicError, nothing stored). If that code calls
// runtime.Goexit, storeSafely cannot return: it wakes f's waiters with a
// *PanicError and unlocks the shard, which the caller holds, as the
// goroutine unwinds.
func (c *Cache[K, V]) storeSafely(f *flight[K, V], o outcome[V], now int64) (r *record[V], pe *PanicError) {
	returned := false
	defer func() {
		if returned {
			return
		}
		v := recover()
		pe = &PanicError{Value: v, Goexit: v == nil, Storing: true, Stack: debug.Stack()}
		if v != nil {
			return // finish goes on with pe
		}
		c.deliver(f, outcome[V]{kind: abandoned, err: pe}, nil)
	}()
	r = c.store(f, o, now)
	returned = true
	return r, nil
}

// current reports whether r is key's record in the cache: a failed reload
// keeps its previous value only if nothing (an InvalidateAll racing the
// reload's start, say) has removed or replaced it since.
func (c *Cache[K, V]) current(key K, r *record[V]) bool {
	cur, ok := c.core.Peek(key)
	return ok && cur == r
}

// store records o for f's key and returns the record stored, if any. The
// caller holds the key's shard lock.
func (c *Cache[K, V]) store(f *flight[K, V], o outcome[V], now int64) *record[V] {
	switch o.kind {
	case loaded:
		r := c.valueRecord(o.value, now, f.gen)
		if o.limited {
			c.limitRecord(r, now, o.limit)
		}
		return c.put(f.key, r, now)
	case notFound:
		if c.notFoundTTL < 0 {
			// Not remembered, but the source says the key is gone: do
			// not serve an older value of it either.
			c.core.Delete(f.key)
			return nil
		}
		end := lifetime(now, c.notFoundTTL, c.factor())
		r := &record[V]{err: o.err, loadGen: f.gen, retryAt: end, nextLoad: end}
		return c.put(f.key, r, now)
	case failed:
		// Without error caching (ErrorTTL < 0) the failure is kept only
		// with a previous value, for the stale error to carry, and holds
		// no reload back.
		end := now
		if c.errorTTL >= 0 {
			end = lifetime(now, c.errorTTL, c.errorFactor())
		}
		r := &record[V]{err: o.err, loadGen: f.gen, retryAt: end, nextLoad: end}
		mark := c.markClears()
		if p := f.prev; p != nil && p.hasValue && now < p.staleUntil && c.current(f.key, p) {
			// Keep the previous value for stale-if-error (and, if it is
			// still fresh, for plain reads until its TTL).
			r.value, r.hasValue, r.gen, r.loadedAt = p.value, true, p.gen, p.loadedAt
			r.freshUntil, r.staleUntil = p.freshUntil, p.staleUntil
			r.staleErr = fmt.Errorf("%w (reload failed: %w)", ErrStale, o.err)
		} else if c.errorTTL < 0 {
			return nil
		}
		stored := c.put(f.key, r, now)
		if r.hasValue && c.clearRaced(mark) {
			// An InvalidateAll's clear, which takes no shard lock, may
			// have removed the previous value after the check above: the
			// copy must not bring it back once InvalidateAll returns.
			if stored != nil && c.current(f.key, stored) {
				c.core.Delete(f.key)
			}
			return nil
		}
		return stored
	}
	return nil
}
