package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit"
	goredis "github.com/redis/go-redis/v9"
)

// DefaultBytePrefix is the default ByteTierOptions.Prefix. Neither it nor
// DefaultPrefix starts with the other, so a Cache and a ByteTier left at
// their defaults on one Redis use keys apart.
const DefaultBytePrefix = "cachekit-bytes:"

// ErrClosed is returned by the methods of a ByteTier, and by Set and
// Delete of a Cache, after Close.
var ErrClosed = errors.New("redis: closed")

// ByteTierOptions configures a ByteTier. Client is required; every other
// field has a usable zero value.
type ByteTierOptions struct {
	// Client is the Redis client, as Options.Client: a *goredis.Client, a
	// *goredis.ClusterClient or another goredis.UniversalClient, created
	// with ContextTimeoutEnabled (see ClientDefaults), reading from the
	// masters (see Options.Client). The ByteTier does not close it.
	// Required.
	Client goredis.UniversalClient

	// Prefix is prepended to every key in Redis and names the
	// invalidation channel (Prefix + "invalidate"). The instances that
	// share entries use the same prefix. Neither it nor the prefix of a
	// Cache or of another tier on the same Redis may start with the other:
	// a Cache's key would be a ByteTier's (whose entries each would count
	// as incompatible, or overwrite unheard, as each publishes on its own
	// channel). Default DefaultBytePrefix.
	Prefix string

	// Timeout bounds every Redis call (each Get, Set, Delete), whatever
	// the caller's context allows; a Set's or Delete's, too, by the
	// client's read and write timeouts (see Options.Timeout). Default
	// DefaultTimeout (100ms).
	Timeout time.Duration

	// DegradedTTL bounds how long the caller's copies may be stale once
	// the invalidation subscription is lost: Get caps the TTL it reports
	// to DegradedTTL until the subscription is back, and Handlers.Flush is
	// called DegradedTTL after the loss and every DegradedTTL while it
	// lasts. Default DefaultDegradedTTL (5s); at least MinPeriod.
	DegradedTTL time.Duration

	// BreakerFailures is the number of consecutive failed Redis calls
	// that opens the circuit breaker (as Options.BreakerFailures: a write
	// refused while Redis answers reads is not one; on a cluster or ring
	// each node has its own breaker); while it is open, the calls it
	// covers fail at once with ErrUnavailable. Default
	// DefaultBreakerFailures (5).
	BreakerFailures int

	// BreakerOpenFor is how long the breaker stays open before it lets
	// one probe call through. Default DefaultBreakerOpenFor (1s).
	BreakerOpenFor time.Duration

	// HealthCheck is how long the subscription may stay silent before it
	// is pinged; a ping unanswered for as long again means it is lost.
	// Default DefaultHealthCheck (5s); at least MinPeriod.
	HealthCheck time.Duration

	// ResubscribeDelay is the first pause before subscribing again after a
	// loss; it doubles on each failed attempt, up to 32 times. Default
	// DefaultResubscribeDelay (100ms); at least MinPeriod.
	ResubscribeDelay time.Duration

	// Sharded chooses sharded Pub/Sub (SSUBSCRIBE, SPUBLISH): ShardedAuto,
	// the default, uses it with a *goredis.ClusterClient.
	Sharded Sharding

	// Logger receives lost or refused subscriptions (see Options.Logger),
	// breaker changes and unreadable entries (at most one line per kind
	// per second). Default nil: slog.Default().
	Logger *slog.Logger

	// Clock is the breaker's time source. Default nil: the system clock.
	// NewByteTier reads it once, and returns an error wrapping
	// ErrInvalidOptions if that panics (a nil pointer of a clock type, say),
	// as the Cache's New does.
	Clock cachekit.Clock

	// MaxBulkLen is the longest string the ByteTier sends to Redis: an
	// entry (the value and a 28-byte header) or a key with its Prefix.
	// Redis refuses a longer one than its proto-max-bulk-len and closes the
	// connection, so the ByteTier does not send it: Set returns an error
	// wrapping ErrTooLarge, and Get and Delete of a longer key one too,
	// without calling Redis or passing the breaker; each is counted in
	// Stats.L2TooLarge. NewByteTier refuses a Prefix whose invalidation
	// channel (Prefix and "invalidate") is longer. Set it to the server's
	// proto-max-bulk-len if that was lowered. Default DefaultMaxBulkLen
	// (512 MiB, Redis's default); negative values are invalid.
	MaxBulkLen int
}

func (o *ByteTierOptions) resolve() error {
	bad := badOption
	if o.Client == nil {
		return bad("Client is required")
	}
	if err := checkClient(o.Client); err != nil {
		return bad("%v", err)
	}
	if o.Clock != nil {
		if err := recovered(func() error { o.Clock.Now(); return nil }); err != nil {
			return bad("Clock's Now panicked: %v", err)
		}
	}
	if err := resolveDurations(bad,
		durationOption{"Timeout", &o.Timeout, DefaultTimeout, 0},
		durationOption{"DegradedTTL", &o.DegradedTTL, DefaultDegradedTTL, MinPeriod},
		durationOption{"BreakerOpenFor", &o.BreakerOpenFor, DefaultBreakerOpenFor, 0},
		durationOption{"HealthCheck", &o.HealthCheck, DefaultHealthCheck, MinPeriod},
		durationOption{"ResubscribeDelay", &o.ResubscribeDelay, DefaultResubscribeDelay, MinPeriod},
	); err != nil {
		return err
	}
	if o.BreakerFailures < 0 {
		return bad("BreakerFailures must not be negative")
	}
	if o.BreakerFailures == 0 {
		o.BreakerFailures = DefaultBreakerFailures
	}
	if o.Sharded > ShardedOff {
		return bad("unknown Sharded value %d", o.Sharded)
	}
	if err := resolveMaxBulkLen(bad, &o.MaxBulkLen); err != nil {
		return err
	}
	if o.Prefix == "" {
		o.Prefix = DefaultBytePrefix
	}
	if err := checkChannel(bad, o.Prefix, o.MaxBulkLen); err != nil {
		return err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Handlers receive what a ByteTier learns from its invalidation channel.
// Each may be nil. They are called on the ByteTier's subscription
// goroutine (Flush and Lost, while the subscription is down, also on a
// timer's), one at a time, never after Close has returned; they must
// return quickly (the next message waits) and must not call Close. A
// panic in Invalidate is logged and ends the subscription, which is then
// lost (and Flush called) as if Redis had dropped it; a panic in Lost or
// Flush is logged.
//
// For the cachekit service (whose service.Server keeps an in-memory copy
// of what it reads from the tier):
//
//	tier.SetHandlers(redis.Handlers{
//		Invalidate: func(key []byte) { srv.Invalidate(key) },
//		Flush:      srv.InvalidateAll,
//	})
//
// With these, an in-memory copy is never stale for longer than about
// DegradedTTL after an invalidation it missed. Flushing drops entries
// that exist only in memory too (those whose write to Redis failed); a
// server that cannot afford it may drop only what it read from the tier,
// but it must drop that.
type Handlers struct {
	// Invalidate is called with a key (without the prefix) that another
	// instance set or deleted: the caller drops its copy. key is valid
	// only during the call.
	Invalidate func(key []byte)

	// Lost is called when the subscription is lost: from then on other
	// instances' invalidations may be missed, until Flush is called. The
	// ByteTier already caps the TTLs Get reports to DegradedTTL meanwhile;
	// Lost is for logs and metrics, or for a caller that also wants to
	// shorten the lifetimes of what it holds.
	Lost func()

	// Flush is called when the caller's copies may have missed
	// invalidations: DegradedTTL after the subscription was lost, or after
	// a failed attempt if it was never up, and every DegradedTTL while it
	// stays down; and when it is confirmed again after a loss (or confirmed
	// for the first time after NewByteTier returned). The caller drops
	// every copy of an entry it read from the tier. Calls never overlap.
	Flush func()
}

// ByteTier is a shared second tier of opaque byte values in Redis, for
// processes that keep their own in-memory copies (such as the cachekit
// service, whose service.Tier it implements): Get, Set and Delete read and
// write Redis; Set and Delete also publish an invalidation that the other
// instances' ByteTiers pass to their Handlers.Invalidate. An instance
// ignores its own invalidations. The subscription (sharded on a Redis
// Cluster) and its loss are handled as in Cache; see Handlers.
//
// Every call is bounded by ByteTierOptions.Timeout and passes the circuit
// breaker: with Redis down, calls fail within Timeout and, once the breaker
// is open, at once with ErrUnavailable. Errors are returned, never hidden.
//
// Values are stored in the envelope a Cache uses (value kind, a
// fingerprint of their own, the expiry in Unix milliseconds), with PXAT.
// Get computes the remaining TTL from the stored expiry and this machine's
// clock, in one GET. Set overwrites; Delete leaves in the value's place,
// for twice Timeout, a tombstone that Get reads as a miss (so that its
// answer survives the client resending it: see Delete). There is no
// tombstone for loads to respect: a ByteTier does not write what it read.
//
// All methods are safe for concurrent use. Keys and values passed to a
// method are only read during the call; Get appends to dst. A ByteTier runs
// one goroutine (the subscription), and while the subscription is down a
// timer that calls Handlers.Flush; Close stops both.
type ByteTier struct {
	core
	fp        uint64
	handlers  atomic.Pointer[Handlers]
	key       []byte // the key passed to Handlers.Invalidate; subscription goroutine only
	closeOnce sync.Once
}

// byteTierFingerprint marks the values of ByteTiers, so that a Cache's
// values are not mistaken for them, nor theirs for a Cache's.
var byteTierFingerprint = fingerprint[[]byte](BytesCodec{}, "cachekit/redis.ByteTier")

// NewByteTier returns a ByteTier configured by o, or an error wrapping
// ErrInvalidOptions. It subscribes to the invalidations of its prefix and
// waits up to Timeout for the subscription to be confirmed; if Redis does
// not answer by then, or refuses (the connection or the subscription: then
// NewByteTier returns at once), the tier starts degraded and keeps trying
// in the background (and Handlers.Flush is called once it succeeds).
func NewByteTier(o ByteTierOptions) (*ByteTier, error) {
	if err := o.resolve(); err != nil {
		return nil, err
	}
	t := &ByteTier{fp: byteTierFingerprint}
	t.init(coreSettings{
		client:           o.Client,
		prefix:           o.Prefix,
		timeout:          o.Timeout,
		degradedTTL:      o.DegradedTTL,
		healthCheck:      o.HealthCheck,
		resubscribeDelay: o.ResubscribeDelay,
		breakerFailures:  o.BreakerFailures,
		breakerOpenFor:   o.BreakerOpenFor,
		sharded:          o.Sharded,
		clock:            o.Clock,
		maxBulkLen:       o.MaxBulkLen,
		log:              o.Logger.With("tier", o.Prefix),
	})
	t.invalidate = func(key string) {
		if h := t.handlers.Load(); h != nil && h.Invalidate != nil {
			t.key = append(t.key[:0], key...)
			h.Invalidate(t.key)
		}
	}
	// Lost and Flush run on the subscription's goroutine or on a timer's:
	// a panic in them is logged, not the end of the process.
	t.lost = func() {
		if h := t.handlers.Load(); h != nil && h.Lost != nil {
			t.handlerPanic("Lost", recovered(func() error { h.Lost(); return nil }))
		}
	}
	t.flushLocal = func() {
		if h := t.handlers.Load(); h != nil && h.Flush != nil {
			t.handlerPanic("Flush", recovered(func() error { h.Flush(); return nil }))
		}
	}
	t.startSubscription()
	t.returned.Store(true)
	return t, nil
}

// handlerPanic logs the panic of a handler, if err is one.
func (t *ByteTier) handlerPanic(name string, err error) {
	if err != nil {
		t.logs.log(t.log, "handler", "redis: a ByteTier handler panicked", "handler", name,
			"err", err, "stack", string(err.(*clientPanic).stack))
	}
}

// SetHandlers installs the handlers of the invalidations and of the
// subscription's losses, replacing earlier ones. Events before the first
// call are not kept. It exists apart from the options because the handlers
// usually call what is built with the ByteTier (a service.Server).
func (t *ByteTier) SetHandlers(h Handlers) { t.handlers.Store(&h) }

// Get appends key's value to dst and returns it with the entry's remaining
// time to live (0: no expiry), or dst and false if Redis holds no value of
// a ByteTier under key (a missing key, or one holding something else,
// counted in Stats.L2Incompatible). While the subscription is down the TTL
// is at most DegradedTTL. It returns an error if Redis fails or does not
// answer within Timeout, ErrUnavailable if the breaker is open. If ctx
// ends first, Get returns an error wrapping ctx.Err() at once, even if
// Redis hangs (the GET goes on to its end meanwhile). After Close, Get
// returns ErrClosed and sends nothing; Close waits for the Gets in flight,
// including those whose callers have gone. A nil ctx is an error: Get returns dst and one at once,
// without calling Redis or passing the breaker.
func (t *ByteTier) Get(ctx context.Context, dst, key []byte) (value []byte, ttl time.Duration, found bool, err error) {
	if ctx == nil {
		return dst, 0, false, errNilContext
	}
	if t.life.Err() != nil {
		return dst, 0, false, ErrClosed
	}
	if err := t.fits(len(key), 0); err != nil {
		return dst, 0, false, fmt.Errorf("redis: reading %.64q: %w", key, err)
	}
	up, confirms := t.subscriptionMark()
	start := time.Now()
	cctx, cancel := t.callContext(ctx, start)
	defer cancel()
	rkey := t.prefix + string(key) // here: key is the caller's again once Get returns
	brk := t.breakerAt(t.nodeAddr(ctx, cctx, rkey))
	tk, ok := brk.allow()
	if !ok {
		t.st.l2Skipped.Add(1)
		return dst, 0, false, ErrUnavailable
	}
	var raw string
	err = t.call(ctx, brk, tk, false, func() (err error) {
		if ctx.Done() == nil {
			raw, err = t.get(cctx, rkey)
		} else {
			raw, err = t.detachedGet(ctx, cctx, rkey)
		}
		return err
	})
	if errors.Is(err, ErrClosed) {
		return dst, 0, false, ErrClosed
	}
	t.st.observeRead(time.Since(start))
	switch {
	case errors.Is(err, goredis.Nil):
		t.st.l2Misses.Add(1)
		return dst, 0, false, nil
	case err != nil && isServerReply(err) && !unavailableReply(err):
		// WRONGTYPE and the like: the key holds something not ours.
		t.incompatible(key, err)
		return dst, 0, false, nil
	case err != nil:
		if callerEnded(ctx, err) { // the caller gave up: no failure of Redis
			err = callerErr(ctx, err)
		} else {
			t.st.l2Errors.Add(1)
		}
		return dst, 0, false, fmt.Errorf("redis: reading %q: %w", key, err)
	}
	kind, fp, exp, ok := parseHeader(raw)
	switch {
	case ok && kind == kindTomb: // a Cache's deletion: no value
		t.st.l2Misses.Add(1)
		return dst, 0, false, nil
	case !ok || fp != t.fp:
		t.incompatible(key, ErrIncompatible)
		return dst, 0, false, nil
	}
	ttl = -1
	if exp > 0 {
		if ttl = time.Until(time.UnixMilli(exp)); ttl <= 0 {
			// Expired by this machine's clock: Redis is about to drop it.
			t.st.l2Misses.Add(1)
			return dst, 0, false, nil
		}
	}
	if !t.steadySince(up, confirms) {
		ttl = capTTL(ttl, t.degradedTTL)
	}
	t.st.l2Hits.Add(1)
	return append(dst, raw[headerSize:]...), max(ttl, 0), true, nil
}

func (t *ByteTier) incompatible(key []byte, err error) {
	t.st.l2Incompatible.Add(1)
	t.logs.log(t.log, "incompatible", "redis: a key holds no value of a ByteTier; read as a miss", "key", string(key), "err", err)
}

// get sends the GET of a Get. It is admitted here, right before the GET,
// rather than with Get's first check: Close may have begun since (nothing
// is sent after it has returned), and a refusal is neutral for the
// breaker.
func (t *ByteTier) get(ctx context.Context, rkey string) (string, error) {
	if !t.beginCall() {
		return "", ErrClosed
	}
	defer t.endCall()
	return t.client.Get(ctx, rkey).Result()
}

// detachedGet is get on a goroutine of its own, for a caller whose ctx can
// be cancelled (see detach); Close waits for the GET even if its caller
// has gone. A separate function, so that Get's usual path (a context that
// is never cancelled) allocates nothing more for it.
func (t *ByteTier) detachedGet(ctx, cctx context.Context, rkey string) (string, error) {
	var raw string
	err := detach(ctx, func() (err error) {
		raw, err = t.get(cctx, rkey)
		return err
	})
	if err != nil { // and raw, if ctx ended first, is the goroutine's
		return "", err
	}
	return raw, nil
}

// Set stores value under key for ttl (negative: no expiry; zero is an
// error; under a millisecond, the smallest TTL Redis keeps, a millisecond)
// and publishes key's invalidation, in one round trip. If the write
// succeeds but the publication fails, the error says so: other instances
// may keep their old copies. Once its write is sent, Set waits for
// Redis's answer even if ctx is cancelled (a deadline of ctx still ends
// it), so that it reports what became of the write; a Redis that hangs
// holds it for at most Timeout; a write that reaches Redis after its
// deadline does nothing (see the package doc, Writes and invalidation).
// After Close, Set returns ErrClosed; Close waits for the Sets in flight.
// A nil ctx is an error: Set returns one at once, without calling Redis or
// passing the breaker.
func (t *ByteTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	if ctx == nil {
		return errNilContext
	}
	if !t.beginCall() {
		return ErrClosed
	}
	defer t.endCall()
	if ttl == 0 {
		return fmt.Errorf("redis: setting %q: zero TTL (negative means no expiry)", key)
	}
	var exp int64
	if ttl > 0 {
		exp = expiresAt(ttl)
	}
	if err := t.fits(len(key), headerSize+len(value)); err != nil {
		return fmt.Errorf("redis: setting %.64q: %w", key, err)
	}
	env := newEnvelope(kindValue, mrand.Uint64(), t.fp, exp, len(value))
	env = append(env, value...)
	skey := string(key)
	_, err := t.writeAndPublish(ctx, skey, writeLua, func(ctx context.Context, p goredis.Pipeliner, latest int64, whole bool) *goredis.Cmd {
		if exp == 0 {
			return runWrite(ctx, p, whole, t.prefix+skey, env, "", 0, latest)
		}
		return runWrite(ctx, p, whole, t.prefix+skey, env, "pxat", exp, latest)
	})
	return err
}

// Delete removes key's value, reporting whether Redis held one, and
// publishes its invalidation (whether or not it was there), in one round
// trip; like Set, it waits for Redis's answer once sent. In the value's
// place Redis keeps, for twice Timeout, a tombstone (which Get reads as a
// miss) marked with this call, so that the answer survives the client
// resending the call (go-redis resends a pipeline whose reply it lost,
// up to its MaxRetries; a plain DEL sent twice would find nothing the
// second time and answer false). A key that holds a tombstone already holds no value:
// Delete reports false and leaves it. After Close, Delete returns
// ErrClosed; Close waits for the Deletes in flight.
// A nil ctx is an error: Delete returns false and one at once, without
// calling Redis or passing the breaker.
func (t *ByteTier) Delete(ctx context.Context, key []byte) (bool, error) {
	if ctx == nil {
		return false, errNilContext
	}
	if !t.beginCall() {
		return false, ErrClosed
	}
	defer t.endCall()
	if err := t.fits(len(key), 0); err != nil {
		return false, fmt.Errorf("redis: deleting %.64q: %w", key, err)
	}
	skey := string(key)
	tomb := newEnvelope(kindTomb, mrand.Uint64(), 0, 0, 0)
	keep := tombstoneKeep(t.timeout)
	found, err := t.writeAndPublish(ctx, skey, deleteLua, func(ctx context.Context, p goredis.Pipeliner, latest int64, whole bool) *goredis.Cmd {
		return runScript(ctx, p, deleteLua, whole, t.prefix+skey, tomb, keep, latest)
	})
	return found == 1, err
}

// tombstoneKeep is how long, in milliseconds, a ByteTier's Delete keeps
// its tombstone: twice timeout, rounded up (a millisecond at least; the
// longest Duration for a timeout so long that twice it overflows).
func tombstoneKeep(timeout time.Duration) int64 {
	if timeout > math.MaxInt64/2 {
		return ceilMilliseconds(math.MaxInt64)
	}
	return ceilMilliseconds(max(2*timeout, time.Millisecond))
}

// deleteScript replaces the value of KEYS[1] with the tombstone ARGV[1],
// to expire ARGV[2] milliseconds later, and answers 1; it answers 0 if
// there is no key, or if the key holds a tombstone already, which it
// leaves, unless that tombstone is ARGV[1] itself (same write id), left by
// an earlier attempt of the same call, whose answer it then repeats (1).
// A key of another type than string is a value to delete (1). Like
// writeScript, it does nothing once the server's clock is past ARGV[3]
// (-1), and returns {answer, the server's time}.
const deleteScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local latest = tonumber(ARGV[3])
if latest > 0 and now > latest then return {-1, now} end
local ty = redis.call('TYPE', KEYS[1])['ok']
if ty == 'none' then return {0, now} end
if ty == 'string' then
  local cur = redis.call('GET', KEYS[1])
  if #cur >= 28 and string.sub(cur, 1, 4) == 'ck\1t' then
    if string.sub(cur, 5, 12) == string.sub(ARGV[1], 5, 12) then return {1, now} end
    return {0, now}
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {1, now}
`

var deleteLua = goredis.NewScript(deleteScript)

// Stats returns the tier's counters: the L2 fields count its Redis calls
// (L2Hits, L2Misses, L2Incompatible and L2Errors its Gets, L2Writes and
// L2WriteErrors its Sets and Deletes, L2Skipped the calls refused by the
// breaker; a call that fails because its caller's context ended is no
// error of Redis and counts in neither L2Errors nor L2WriteErrors); the
// L1, Local and Load fields are zero.
func (t *ByteTier) Stats() Stats { return t.stats() }

// Close stops the subscription and waits for its goroutine and for the
// Gets, Sets and Deletes in flight (each ends within Timeout), so that
// nothing is sent to Redis after Close has returned; the handlers are not
// called afterwards, and the methods return ErrClosed. The Redis client
// stays open. Close is idempotent.
func (t *ByteTier) Close() { t.closeOnce.Do(t.stop) }
