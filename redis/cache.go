package redis

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit"
	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

var (
	// ErrUnavailable is returned by Set and Delete when the circuit
	// breaker is open: Redis failed repeatedly and is not called for now.
	// L1 was changed all the same. On a cluster or ring it may also wrap
	// the error of a write that landed but whose invalidation was not
	// published, the breaker of the channel's node being open (see the
	// package documentation, Faults). ByteTier's calls return it too.
	ErrUnavailable = errors.New("redis: Redis unavailable (circuit breaker open)")

	// ErrIncompatible is wrapped by the errors logged for values in Redis
	// that this cache cannot decode (another fingerprint, not an envelope
	// of ours, or a codec error). Such a value is a miss.
	ErrIncompatible = errors.New("redis: incompatible value in Redis")
)

// Cache is a two-tier cache of values of type V under string keys: L1 in
// process, L2 in Redis, then the Loader. See the package documentation for
// the contract.
//
// All methods are safe for concurrent use. A Cache must not be copied; use
// the pointer New returns, and Close it when done.
type Cache[V any] struct {
	core // Redis, the breaker, the counters, the invalidations

	l1     *loading.Cache[string, V]
	loader loading.Loader[string, V]
	codec  Codec[V]
	fp     uint64

	ttl, tombstoneTTL time.Duration
	// loadWindow is how long after its read of Redis a load's write may
	// still apply (see writeLoaded).
	loadWindow time.Duration
	clock      cachekit.Clock

	cas   *goredis.Script
	queue chan write

	exactTTL bool
	reads    *reads // coalesces the reads of Redis
	// fromString, with StringCodec (so V is string), returns a string
	// payload as the value it is.
	fromString func(string) V
	closeOnce  sync.Once

	// stripes order this instance's Sets and Deletes of a key, and tell
	// the reads of Redis that race them (see change).
	stripes    [writeStripes]stripe
	stripeSeed maphash.Seed
}

const writeStripes = 256

// stripe is the state shared by this instance's Sets and Deletes of the
// keys that hash to it (see change).
type stripe struct {
	// lock holds a token while a Set or Delete holds the stripe: a
	// channel rather than a mutex, so that a caller whose context ends
	// while it waits gives up.
	lock chan struct{}
	// writing is set while the holder changes L1 and writes Redis: the
	// key it writes, marked by a read of that key that starts meanwhile.
	writing atomic.Pointer[pendingWrite]
}

// pendingWrite is a Set or Delete of key under way (see change).
type pendingWrite struct {
	key   string
	raced atomic.Bool // a read of key started while it was under way
}

// acquire takes s's lock. If another Set or Delete holds it, acquire waits
// for it, unless ctx ends first (it returns ctx.Err()) or closing is
// closed (ErrClosed).
func (s *stripe) acquire(ctx context.Context, closing <-chan struct{}) error {
	select {
	case s.lock <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-closing:
		return ErrClosed
	}
}

func (c *Cache[V]) stripe(key string) *stripe {
	return &c.stripes[maphash.String(c.stripeSeed, key)%writeStripes]
}

// noteRead is called by every read of key's Redis entry before it is
// sent (see change). Reads of the stripe's other keys do not count: they
// store nothing under key.
func (s *stripe) noteRead(key string) {
	if w := s.writing.Load(); w != nil && w.key == key {
		w.raced.Store(true)
	}
}

// write is a loaded value waiting to be written to Redis.
type write struct {
	key   string // Redis key
	data  []byte // envelope
	token string // what the load read: the compare-and-set token
	born  time.Time
}

// New returns a Cache configured by opts, or an error wrapping
// ErrInvalidOptions. It subscribes to the invalidations of its prefix and
// waits up to Options.Timeout for the subscription to be confirmed; if
// Redis does not answer by then, or refuses (the connection or the
// subscription: then New returns at once), the Cache starts degraded (see
// DegradedTTL) and keeps trying in the background.
func New[V any](opts Options[V]) (*Cache[V], error) {
	if err := opts.resolve(); err != nil {
		return nil, err
	}
	c := &Cache[V]{
		loader:       opts.Loader,
		codec:        opts.Codec,
		fp:           fingerprint(opts.Codec, opts.Version),
		ttl:          opts.TTL,
		tombstoneTTL: opts.TombstoneTTL,
		loadWindow:   min(opts.TombstoneTTL, opts.TTL) - 2*opts.Timeout,
		clock:        opts.Clock,
		exactTTL:     opts.ExactTTL,
		cas:          goredis.NewScript(casScript),
		queue:        make(chan write, opts.WriteQueue),
		stripeSeed:   maphash.MakeSeed(),
	}
	for i := range c.stripes {
		c.stripes[i].lock = make(chan struct{}, 1)
	}
	if _, ok := any(opts.Codec).(StringCodec); ok {
		c.fromString, _ = any(func(s string) string { return s }).(func(string) V)
	}
	c.init(coreSettings{
		client:           opts.Client,
		prefix:           opts.Prefix,
		timeout:          opts.Timeout,
		degradedTTL:      opts.DegradedTTL,
		healthCheck:      opts.HealthCheck,
		resubscribeDelay: opts.ResubscribeDelay,
		breakerFailures:  opts.BreakerFailures,
		breakerOpenFor:   opts.BreakerOpenFor,
		sharded:          opts.Sharded,
		clock:            opts.Clock,
		maxBulkLen:       opts.MaxBulkLen,
		log:              opts.Logger.With("cache", opts.Prefix),
		logWrites:        true,
	})
	c.reads = newReads(&c.core, opts.ExactTTL, opts.ReadsInFlight)
	local := opts.Local
	local.Loader = loading.LoaderFunc[string, V](c.load)
	local.Probe = prober[V]{c}
	l1, err := loading.New(local)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	c.l1 = l1
	c.invalidate = func(key string) { c.l1.Delete(key) }
	c.flushLocal = c.l1.InvalidateAll
	c.wg.Add(opts.Writers)
	for range opts.Writers {
		go c.writeLoop()
	}
	// Wait (at most Timeout) for the subscription, so that a healthy
	// start does not flush L1 while the first loads run.
	c.startSubscription()
	c.returned.Store(true)
	return c, nil
}

func (c *Cache[V]) now() time.Time {
	if c.clock != nil {
		return c.clock.Now()
	}
	return time.Now()
}

// Get returns key's value from L1, or else loads it once (however many
// callers ask at the same time) from Redis or, on a miss there, from the
// Loader. Its results are those of loading.Cache.Get: a stale value comes
// with an error wrapping loading.ErrStale (with Local.MaxStale), a loader's
// failure or not-found answer is returned (and remembered for
// Local.ErrorTTL or Local.NotFoundTTL), ctx ending returns ctx.Err() while
// the load goes on. An L1 hit sends nothing to Redis. A nil ctx is an
// error: Get returns one at once and does nothing else.
func (c *Cache[V]) Get(ctx context.Context, key string) (V, error) {
	if ctx == nil {
		var zero V
		return zero, errNilContext
	}
	return c.l1.Get(ctx, key)
}

// GetMany returns the values of keys, like Get for each key (see
// loading.Cache.GetMany for the results): keys missing from L1 are read
// from Redis and loaded concurrently, one load per key (not one MGET). A
// nil ctx is an error: GetMany returns nil and an error at once.
func (c *Cache[V]) GetMany(ctx context.Context, keys []string) (map[string]V, error) {
	if ctx == nil {
		return nil, errNilContext
	}
	return c.l1.GetMany(ctx, keys)
}

// Set stores value for key in L1 and in Redis (with Options.TTL), and
// publishes an invalidation so that other instances drop the key from
// their L1. A load of key in flight when Set is called (here or in another
// instance) does not overwrite it in either tier, nor does a load of this
// instance that reads Redis before the new value is there. If value
// cannot be encoded, Set returns the codec's error and changes nothing.
// If Redis fails, L1 holds the new value but the error is returned: Redis
// and the other instances may still serve the old one.
//
// Sets and Deletes of one key in one instance run one at a time (each
// waits for the previous one's Redis write), so both tiers keep the last;
// if ctx ends while Set waits for its turn, Set returns an error wrapping
// ctx.Err() and changes nothing. Once its write is sent, Set waits for
// Redis's answer even if ctx is cancelled (a deadline of ctx still ends
// it): it reports what became of the write, and the key's next change
// does not overtake it; a Redis that hangs holds it for at most
// Options.Timeout. After Close, Set returns ErrClosed; Close
// waits for the Sets in flight. A nil ctx is an error: Set returns one and
// changes nothing.
func (c *Cache[V]) Set(ctx context.Context, key string, value V) error {
	if ctx == nil {
		return errNilContext
	}
	if c.life.Err() != nil {
		return ErrClosed // before encoding: a value the codec refuses too
	}
	env, err := c.encode(value, c.ttl)
	if err != nil {
		return fmt.Errorf("redis: encoding the value of %q: %w", key, err)
	}
	if err := c.fits(len(key), len(env)); err != nil {
		return fmt.Errorf("redis: setting %.64q: %w", key, err)
	}
	return c.change(ctx, key, func() {
		c.l1.Set(key, value)
		// The Redis entry's lifetime starts now, not when Set began (it
		// may have waited for its turn): the L1 copy must not outlive it.
		setExpiry(env, expiresAt(c.ttl))
	}, func() error {
		return c.writeAndPublish(ctx, key, env)
	})
}

// Delete removes key from L1 and from Redis (leaving a tombstone there for
// Options.TombstoneTTL) and publishes an invalidation. A load of key in
// flight when Delete is called (here or in another instance) stores its
// result in neither tier, nor does a load of this instance that reads
// Redis before the tombstone is there. If Redis fails, the error is
// returned; the key is gone from this instance's L1 all the same. Delete
// waits for its turn, and for Redis's answer, as Set does, and returns
// ErrClosed after Close. A nil
// ctx is an error: Delete returns one and changes nothing.
func (c *Cache[V]) Delete(ctx context.Context, key string) error {
	if ctx == nil {
		return errNilContext
	}
	if c.life.Err() != nil {
		return ErrClosed // before the length check, as in Set
	}
	if err := c.fits(len(key), 0); err != nil {
		// Never in Redis (see MaxBulkLen), but perhaps in L1.
		c.l1.Delete(key)
		return fmt.Errorf("redis: deleting %.64q from L1 only: %w", key, err)
	}
	return c.change(ctx, key, func() { c.l1.Delete(key) }, func() error {
		env := newEnvelope(kindTomb, mrand.Uint64(), 0, expiresAt(c.tombstoneTTL), 0)
		_, err := c.core.writeAndPublish(ctx, key, writeLua, func(ctx context.Context, p goredis.Pipeliner, latest int64, whole bool) *goredis.Cmd {
			// A relative expiry: the tombstone must outlive the loads it
			// stops by TombstoneTTL of the server's time, whatever this
			// machine's clock says (a PXAT from a clock running behind the
			// server's by more than TombstoneTTL would delete the key at once).
			// Rounded up: at least TombstoneTTL, and never PX 0 (which
			// Redis refuses) for a TombstoneTTL under a millisecond.
			return runWrite(ctx, p, whole, c.prefix+key, env, "px", ceilMilliseconds(c.tombstoneTTL), latest)
		})
		return err
	})
}

// change runs a Set or Delete of key: local changes L1, then remote
// writes Redis (and publishes), with key's stripe held throughout, so that
// this instance's changes of a key reach both tiers in the same order
// (this instance ignores its own invalidations: nothing would mend L1).
//
// L1 must also not end with what Redis held before the write. A load of
// key in flight when local runs is overtaken by it (it stores nothing).
// But L1 may lose the key while remote is on its way (a flush, an
// eviction, another instance's invalidation, or local itself, in a
// Delete), and a Get that misses it then starts a load that may read the
// old entry from Redis, before the write lands, and store it in L1, where
// it would stay after change returned. So every read of Redis notes, in
// key's stripe, whether it started while a change of that key was under
// way (noteRead); if one did, change drops the key from L1 once remote has
// returned, overtaking such a load if it has not stored yet. A read that
// starts after remote has returned finds the new entry (or a later one).
// A read that saw no change under way either started before local (its
// load is overtaken) or after remote returned.
//
// change never puts a value back into L1 afterwards, even its own: by
// then another instance may have written the key after this write and
// its invalidation may already have been applied here, so the value would
// be stale with nothing to drop it. It only drops: the next Get reads
// Redis, which holds this write or a later one. When no read raced (the
// usual case), L1 keeps what local left, and a Set's value stays an L1
// hit. Reads of other keys of the stripe do not count as racing: they
// cannot store under key, and a drop for them would lose the value of a
// Set whose Redis write failed (L1 is then its only copy).
func (c *Cache[V]) change(ctx context.Context, key string, local func(), remote func() error) error {
	if !c.beginCall() {
		return ErrClosed
	}
	defer c.endCall()
	s := c.stripe(key)
	if err := s.acquire(ctx, c.life.Done()); err != nil {
		return fmt.Errorf("redis: waiting to write %q: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		// The caller gave up (before the call, or just as its turn came):
		// change nothing, rather than L1 alone.
		<-s.lock
		return fmt.Errorf("redis: waiting to write %q: %w", key, err)
	}
	w := &pendingWrite{key: key}
	s.writing.Store(w)
	defer func() {
		s.writing.Store(nil)
		if w.raced.Load() {
			c.l1.Delete(key)
		}
		<-s.lock
	}()
	local()
	return remote()
}

// ceilMilliseconds returns d (not negative) in milliseconds, rounded up.
func ceilMilliseconds(d time.Duration) int64 {
	ms := d.Milliseconds()
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// wallClock is the time source of the expiry times written to Redis (a
// variable so that tests can skew it).
var wallClock = time.Now

// expiresAt returns the Unix millisecond time ttl from now, rounded down,
// with ttl at least a millisecond: the expiry must fall after the current
// millisecond, or Redis deletes the key at once (the value it held with
// it) while the SET succeeds, as it did for a TTL under a millisecond.
func expiresAt(ttl time.Duration) int64 {
	return wallClock().Add(max(ttl, time.Millisecond)).UnixMilli()
}

// writeAndPublish writes env to key's Redis entry (to expire at the time
// the envelope holds) and publishes key's invalidation, in one round trip.
func (c *Cache[V]) writeAndPublish(ctx context.Context, key string, env []byte) error {
	_, err := c.core.writeAndPublish(ctx, key, writeLua, func(ctx context.Context, p goredis.Pipeliner, latest int64, whole bool) *goredis.Cmd {
		// PXAT by hand: go-redis's SetArgs.ExpireAt sends EXAT, in whole
		// seconds, which would drop the entry up to 999 ms before the
		// expiry its envelope carries.
		if exp := expiry(env); exp != 0 {
			return runWrite(ctx, p, whole, c.prefix+key, env, "pxat", exp, latest)
		}
		return runWrite(ctx, p, whole, c.prefix+key, env, "", 0, latest)
	})
	return err
}

func isServerReply(err error) bool {
	var re goredis.Error
	return errors.As(err, &re)
}

// unavailableReply reports whether a Redis error reply says that the server
// cannot serve now, whatever the key (as opposed to a reply about the key's
// value, such as WRONGTYPE): an error of the tier, for the breaker, not an
// incompatible value.
func unavailableReply(err error) bool {
	// MOVED and ASK reach here when go-redis's redirects ran out (a
	// cluster resharding): the slot is in transit, not the key foreign.
	// WRONGPASS is a client whose credentials the server refuses (every
	// command fails, as with NOAUTH); NOREPLICAS a master with fewer
	// replicas than min-replicas-to-write (every write fails; for the
	// breaker, a write's refusal, see writeRefused).
	for _, p := range []string{"LOADING", "CLUSTERDOWN", "MASTERDOWN", "TRYAGAIN", "READONLY", "MOVED ", "ASK ",
		"BUSY", "NOAUTH", "WRONGPASS", "NOPERM", "NOREPLICAS", "NOSCRIPT", "OOM", "MISCONF", "ERR max number of clients"} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// l2 is what a read of Redis found.
type l2 uint8

const (
	l2Found       l2 = iota // an entry (value, tombstone or foreign bytes)
	l2Absent                // no key
	l2Unavailable           // no answer: error, timeout, breaker open
)

// read reads key's Redis entry and its remaining TTL (negative: none) in one
// round trip: a GET, the TTL computed from the expiry in the envelope; with
// ExactTTL, a GET and a PTTL. It also returns the time the read started.
func (c *Cache[V]) read(ctx context.Context, key string) (entry, time.Duration, l2, time.Time) {
	c.stripe(key).noteRead(key)
	start := time.Now()
	if c.life.Err() != nil {
		// Closed while a Get probed (L1's Close does not wait for
		// probes): Redis is not read after Close (the caller may have
		// closed the client since), nor the breaker or counters touched.
		return entry{}, 0, l2Unavailable, start
	}
	if err := c.fits(len(key), 0); err != nil {
		// Unavailable: the load that follows keeps its value in L1 only.
		c.logs.log(c.log, "large", "redis: key not read", "err", err)
		return entry{}, 0, l2Unavailable, start
	}
	cctx, cancel := c.callContext(ctx, start)
	defer cancel()
	rkey := c.prefix + key
	brk := c.breakerAt(c.nodeAddr(ctx, cctx, rkey))
	tk, ok := brk.allow()
	if !ok {
		c.st.l2Skipped.Add(1)
		return entry{}, 0, l2Unavailable, start
	}
	var res readResult
	err := c.call(ctx, brk, tk, false, func() error {
		res = c.reads.get(ctx, cctx, rkey, start)
		return res.err
	})
	if errors.Is(err, ErrClosed) {
		// Close came first (reads.get): nothing was sent, nothing is
		// counted (as in ByteTier.Get).
		return entry{}, 0, l2Unavailable, start
	}
	end := time.Now()
	c.st.observeRead(end.Sub(start))
	switch {
	case errors.Is(err, goredis.Nil):
		return entry{}, 0, l2Absent, start
	case err != nil && isServerReply(err) && !unavailableReply(err):
		// WRONGTYPE and the like: the key holds something not ours.
		c.st.l2Incompatible.Add(1)
		c.logs.log(c.log, "incompatible", "redis: unreadable key", "key", rkey, "err", err)
		return entry{}, 0, l2Unavailable, start
	case err != nil && callerEnded(ctx, err):
		// The caller gave up: no failure of Redis (nor of the
		// breaker's).
		return entry{}, 0, l2Unavailable, start
	case err != nil:
		c.st.l2Errors.Add(1)
		c.logs.log(c.log, "read", "redis: read failed", "key", rkey, "err", err)
		return entry{}, 0, l2Unavailable, start
	}
	e := parseEntry(res.val)
	ttl := time.Duration(-1)
	switch {
	case c.exactTTL && res.pttl == -1: // no expiry
	case c.exactTTL:
		// PTTL is what remained when Redis ran the command, some time
		// after start: counted from end, less the whole read's time, the
		// copy cannot outlive the entry in Redis (a reply that took its
		// time would otherwise lend it up to Timeout more). -2: gone
		// since the GET.
		ttl = max(res.pttl-end.Sub(start), 0)
	case e.exp > 0:
		ttl = max(time.UnixMilli(e.exp).Sub(end), 0)
	}
	return e, ttl, l2Found, start
}

// probed is what a probe of Redis learned about a key that it did not find
// there, passed to the load that follows in its context.
type probed struct {
	e     entry
	found l2
	born  time.Time
}

// probedKey is the context key of a probe's result: it names the cache and
// the key, because the load's context carries its starter's values, and
// inside a loader that reads a cache (this one or another, by GetMany or a
// background reload, which do not probe) a bare key would hand the outer
// key's result to the inner load, which would then skip Redis.
type probedKey struct {
	c   *core
	key string
}

// prober is L1's Prober: it reads Redis on the goroutine of the caller
// that missed L1, so that an L2 hit costs no goroutine hand-off.
type prober[V any] struct{ c *Cache[V] }

func (p prober[V]) Probe(ctx context.Context, key string) (context.Context, V, time.Duration, bool) {
	c := p.c
	var born time.Time
	if c.clock != nil {
		born = c.clock.Now()
	}
	e, ttl, found, start := c.read(ctx, key)
	if c.clock == nil {
		born = start
	}
	if found == l2Unavailable && callerDone(ctx) {
		// The caller gave up: the load (on its own goroutine) reads
		// Redis again.
		var zero V
		return nil, zero, 0, false
	}
	if v, ok := c.l2Value(e, found); ok {
		if !c.subscribed.Load() {
			ttl = capTTL(ttl, c.degradedTTL)
		}
		return nil, v, ttl, true
	}
	var zero V
	return context.WithValue(ctx, probedKey{&c.core, key}, &probed{e: e, found: found, born: born}), zero, 0, false
}

// capTTL returns the shorter of ttl (negative: none) and d.
func capTTL(ttl, d time.Duration) time.Duration {
	if ttl < 0 {
		return d
	}
	return min(ttl, d)
}

// l2Value decodes what a read found, counting hits and misses.
func (c *Cache[V]) l2Value(e entry, found l2) (V, bool) {
	var zero V
	switch {
	case found == l2Found && e.kind == kindValue:
		v, err := c.decode(e)
		if err == nil {
			c.st.l2Hits.Add(1)
			return v, true
		}
		c.st.l2Incompatible.Add(1)
		c.logs.log(c.log, "incompatible", "redis: incompatible value", "err", err)
	case found == l2Found && e.kind == 0:
		c.st.l2Incompatible.Add(1)
		c.logs.log(c.log, "incompatible", "redis: incompatible value", "err", ErrIncompatible)
	case found != l2Unavailable:
		c.st.l2Misses.Add(1)
	}
	return zero, false
}

// load is L1's loader: Redis (unless the probe has just read it), then the
// source.
func (c *Cache[V]) load(ctx context.Context, key string) (v V, err error) {
	// Invalidations may be missed while the subscription is down, or
	// lost during this call (while its read of Redis or its Loader ran,
	// even if it is back by the end): keep what we load only briefly.
	// Bound L1's copy on return, not now: the Loader's own bound
	// (LimitTTL) is read back for the Redis copy, which must not take
	// this one. (A loss clears subscribed before it counts in losses.)
	losses := c.st.losses.Load()
	down := !c.subscribed.Load()
	defer func() {
		if down || !c.subscribed.Load() || c.st.losses.Load() != losses {
			loading.LimitTTL(ctx, c.degradedTTL)
		}
	}()
	rkey := c.prefix + key
	p, _ := ctx.Value(probedKey{&c.core, key}).(*probed)
	if p == nil {
		// A background reload, or a probe whose caller gave up.
		p = &probed{}
		if c.clock != nil {
			p.born = c.clock.Now()
		}
		var ttl time.Duration
		var start time.Time
		p.e, ttl, p.found, start = c.read(ctx, key)
		if c.clock == nil {
			p.born = start
		}
		if v, ok := c.l2Value(p.e, p.found); ok {
			if ttl >= 0 {
				loading.LimitTTL(ctx, ttl)
			}
			return v, nil
		}
	}
	c.st.loads.Add(1)
	returned := false
	defer func() {
		if !returned { // the Loader panicked, or called runtime.Goexit
			c.st.loadErrors.Add(1)
		}
	}()
	v, err = c.loader.Load(ctx, key)
	returned = true
	if err != nil {
		if !errors.Is(err, loading.ErrNotFound) {
			c.st.loadErrors.Add(1)
		}
		return v, err
	}
	// The Loader's bound on its answer's lifetime (loading.LimitTTL)
	// holds in Redis too: an answer it marks stale at once is not shared.
	ttl := c.ttl
	if d, ok := loading.TTLLimit(ctx); ok {
		ttl = min(ttl, d)
	}
	if p.found != l2Unavailable && ttl > 0 {
		c.enqueue(rkey, v, ttl, p.e.casToken(), p.born)
	}
	return v, nil
}

// decode decodes a value entry, never panicking.
func (c *Cache[V]) decode(e entry) (v V, err error) {
	if e.fp != c.fp {
		return v, fmt.Errorf("%w: fingerprint %016x, want %016x", ErrIncompatible, e.fp, c.fp)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the codec panicked: %v", ErrIncompatible, r)
		}
	}()
	if c.fromString != nil {
		// StringCodec: the payload is the value, already a string
		// (immutable), so no copy to bytes and back.
		return c.fromString(e.payload()), nil
	}
	v, err = c.codec.Decode([]byte(e.payload()))
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrIncompatible, err)
	}
	return v, err
}

// errCodecDst is returned by encode for a codec whose Append does not
// append to the slice it is given (it returns a fresh slice, or
// overwrites it).
var errCodecDst = errors.New("the codec's Append did not append to dst")

// encode returns the envelope of value, to expire ttl from now, never
// panicking.
func (c *Cache[V]) encode(value V, ttl time.Duration) (env []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the codec panicked: %v", r)
		}
	}()
	env = newEnvelope(kindValue, mrand.Uint64(), c.fp, expiresAt(ttl), 64)
	var header [headerSize]byte
	copy(header[:], env)
	env, err = c.codec.Append(env, value)
	if err != nil {
		return nil, err
	}
	if len(env) < headerSize || [headerSize]byte(env) != header {
		return nil, errCodecDst
	}
	return env, nil
}

// enqueue queues the write of a loaded value to Redis, or drops it if the
// queue is full.
func (c *Cache[V]) enqueue(rkey string, v V, ttl time.Duration, token string, born time.Time) {
	env, err := c.encode(v, ttl)
	if err != nil {
		c.st.l2WriteErrors.Add(1)
		c.logs.log(c.log, "write", "redis: encoding failed", "key", rkey, "err", err)
		return
	}
	if err := c.fits(len(rkey)-len(c.prefix), len(env)); err != nil {
		c.logs.log(c.log, "large", "redis: loaded value kept in L1 only", "err", err)
		return
	}
	select {
	case c.queue <- write{key: rkey, data: env, token: token, born: born}:
	default:
		c.st.l2WritesDropped.Add(1)
		c.logs.log(c.log, "drop", "redis: write queue full, write dropped", "key", rkey)
	}
}

// writeLoop writes queued values to Redis until Close.
func (c *Cache[V]) writeLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.life.Done():
			return
		case w := <-c.queue:
			// A panic here (Options.Clock's, read for the write's age and
			// by the breaker) would end the process from a goroutine the
			// user cannot guard: the write is dropped and counted as
			// failed instead.
			if err := recovered(func() error { c.writeLoaded(w); return nil }); err != nil {
				c.st.l2WriteErrors.Add(1)
				c.logs.log(c.log, "write", "redis: write of a loaded value panicked, dropped", "key", w.key, "err", err)
			}
		}
	}
}

// writeLoaded writes a loaded value to Redis if its key still holds what
// the load read there.
func (c *Cache[V]) writeLoaded(w write) {
	// A write older than this might have read the key before a Delete
	// whose tombstone has expired since, or before a Set whose value has
	// (the compare-and-set cannot tell a key never written from one
	// written and expired since): drop it. The script drops it too if
	// Redis runs it later than that (a Redis that hung with it: the
	// client gave up, but the server still runs it when it resumes).
	// A window of zero or less (TTL or TombstoneTTL at most twice
	// Timeout) drops every write, even one whose age reads zero.
	allowed := c.loadWindow
	age := c.now().Sub(w.born)
	if allowed <= 0 || age > allowed {
		c.st.l2WritesDropped.Add(1)
		return
	}
	ctx, cancel := context.WithTimeout(c.life, c.timeout)
	defer cancel()
	addr := c.nodeAddr(c.life, ctx, w.key)
	brk := c.breakerAt(addr)
	tk, ok := brk.allow()
	if !ok {
		c.st.l2Skipped.Add(1)
		c.st.l2WritesDropped.Add(1)
		return
	}
	// The script compares the latest time with the server's clock: it is
	// translated there by the estimate the writes' answers (this one's
	// too) keep of how far that clock is ahead of this machine's, as a
	// Set's (core.bound). Without an estimate yet, this machine's time is
	// taken for the server's.
	clock := c.clockAt(addr)
	deadline := time.Now().Add(allowed - age)
	latest, _ := c.bound(clock, deadline, true)
	if latest == 0 {
		latest = deadline.UnixMilli()
	}
	var n int64
	err := c.call(c.life, brk, tk, true, func() error {
		// On a writer goroutine: a panic (in a client hook) is an error.
		return recovered(func() (err error) {
			sent := time.Now()
			var server int64
			n, server, err = scriptAnswer(c.cas.Run(ctx, c.client, []string{w.key}, w.token, w.data, expiry(w.data), latest))
			if err == nil {
				clock.observe(sampleOf(sent, server))
			}
			return err
		})
	})
	switch {
	case err != nil && c.life.Err() != nil:
		c.st.l2WritesDropped.Add(1) // Close
	case err != nil:
		c.st.l2WriteErrors.Add(1)
		c.logs.log(c.log, "write", "redis: write failed, dropped", "key", w.key, "err", err)
	case n == 0:
		c.st.l2WritesRejected.Add(1)
	case n == 2:
		// Past its expiry, or too old, by Redis's clock when it got
		// there: nothing lost a compare-and-set, the write was too late.
		c.st.l2WritesDropped.Add(1)
	default:
		c.st.l2Writes.Add(1)
	}
}

// Close closes L1 (waiting for its loads), then stops the subscription
// and the writers (queued writes are dropped and counted) and waits for
// the Sets and Deletes in flight, so that nothing reaches Redis after Close
// has returned. Get then returns loading.ErrClosed, Set and Delete
// ErrClosed. The Redis client stays open. Close is idempotent. It must not
// be called from the Loader or the Codec (it would wait for the load that
// calls it).
func (c *Cache[V]) Close() {
	c.closeOnce.Do(func() {
		c.l1.Close()
		c.stop()
		c.reads.wait()
		for {
			select {
			case <-c.queue:
				c.st.l2WritesDropped.Add(1)
				continue
			default:
			}
			break
		}
	})
}

// logLimiter lets through at most one log line per kind per second.
type logLimiter struct {
	mu   sync.Mutex
	last map[string]time.Time
	skip map[string]int
}

func (l *logLimiter) log(lg *slog.Logger, kind, msg string, args ...any) {
	now := time.Now()
	l.mu.Lock()
	if l.last == nil {
		l.last, l.skip = map[string]time.Time{}, map[string]int{}
	}
	if now.Sub(l.last[kind]) < time.Second {
		l.skip[kind]++
		l.mu.Unlock()
		return
	}
	l.last[kind] = now
	skipped := l.skip[kind]
	l.skip[kind] = 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "suppressed", skipped)
	}
	lg.Warn(msg, args...)
}
