package redis

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"time"

	"github.com/cachekit/cachekit"
	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// Defaults of the options whose zero value means "the default".
const (
	DefaultPrefix           = "cachekit:"
	DefaultTTL              = 10 * time.Minute
	DefaultLocalTTL         = 30 * time.Second
	DefaultTimeout          = 100 * time.Millisecond
	DefaultTombstoneTTL     = time.Minute
	DefaultDegradedTTL      = 5 * time.Second
	DefaultBreakerFailures  = 5
	DefaultBreakerOpenFor   = time.Second
	DefaultWriteQueue       = 1024
	DefaultWriters          = 2
	DefaultReadsInFlight    = 1 // per GOMAXPROCS
	DefaultHealthCheck      = 5 * time.Second
	DefaultResubscribeDelay = 100 * time.Millisecond
	DefaultMaxBulkLen       = 512 << 20 // Redis's default proto-max-bulk-len
)

// Upper bounds of Options.WriteQueue (whose buffer New allocates at once)
// and Options.Writers (goroutines).
const (
	maxWriteQueue = 1 << 20
	maxWriters    = 1 << 10
)

// Options configures a Cache. Client and Loader are required; every other
// field has a usable zero value.
type Options[V any] struct {
	// Client is the Redis client: a *goredis.Client (a single Redis, or
	// Sentinel through goredis.NewFailoverClient), a *goredis.ClusterClient
	// or anything else that implements goredis.UniversalClient. It must
	// honour context deadlines: for the go-redis clients New checks that
	// ContextTimeoutEnabled is set (ClientDefaults sets it). It must read
	// from the masters (an instance re-reads a key as soon as another's
	// invalidation arrives, and a lagging replica would give it the old
	// value): New refuses a ClusterClient with ReadOnly, RouteByLatency or
	// RouteRandomly, and a Sentinel client must not be ReplicaOnly. With a
	// Sentinel client, the subscription follows the master after a
	// failover: the subscriber asks the client's server for its run_id
	// (INFO server) every DegradedTTL/2 (or Timeout, or 100 ms, if
	// longer). With a *goredis.Ring, the subscription follows the
	// invalidation channel from shard to shard as shards go down and come
	// back, within Timeout (at least 100 ms) of the ring's change (a move
	// counts as a lost subscription); Redis
	// itself is then not consistent: a key written while its shard was
	// down lives on another shard, and the old value is read again once
	// the shard is back (a Ring spreads keys, it does not fail over). The
	// Cache does not close it. Required.
	Client goredis.UniversalClient

	// Loader loads a key from the source on a miss in both tiers. It may
	// return loading.ErrNotFound (remembered in L1 for
	// Local.NotFoundTTL, not written to Redis), and bound its answer's
	// lifetime with loading.LimitTTL, in L1 and in Redis alike (an answer
	// made stale at once is not written to Redis). It must not call the
	// Cache's Close (Close waits for the loads). Required.
	Loader loading.Loader[string, V]

	// Local configures L1, as loading.Options: its bound (MaxEntries or
	// MaxWeight), TTL, TTLJitter, RefreshAfter, MaxStale, ErrorTTL,
	// NotFoundTTL, LoadTimeout, MaxConcurrentRefreshes. Its Loader,
	// BulkLoader and Probe must be nil (the Cache sets its own). Local.TTL zero
	// means DefaultLocalTTL (30s) or TTL if shorter; it must not exceed
	// TTL, even stretched by Local.TTLJitter (by up to 1+TTLJitter/2: with
	// a jitter, the default is shortened to match). Local.Clock nil means
	// Clock.
	Local loading.Options[string, V]

	// Codec encodes values for Redis. Default nil: DefaultCodec[V]().
	Codec Codec[V]

	// Version is mixed into the fingerprint stored with every value: bump
	// it when V keeps its shape but changes meaning, and values written by
	// the old program become misses for the new one. Default "".
	Version string

	// Prefix is prepended to every key in Redis, and names the
	// invalidation channel (Prefix + "invalidate"). Caches of different
	// value types must use different prefixes, none of which starts with
	// another (nor with a ByteTier's, nor a ByteTier's with one of them):
	// "app:" and "app:users:" share the Redis key "app:users:1". Default
	// DefaultPrefix.
	Prefix string

	// TTL is the time to live of values in Redis (under a millisecond,
	// the smallest TTL Redis keeps, a millisecond). Default DefaultTTL
	// (10 minutes); negative values are invalid. A TTL shorter than
	// TombstoneTTL shortens the time a load's write may take as well (see
	// TombstoneTTL): a Set's value that expired would otherwise look to
	// the compare-and-set like the key the load found absent. Instances
	// that share a Prefix must use the same TTL and TombstoneTTL.
	TTL time.Duration

	// ExactTTL makes every Redis read ask for the entry's remaining TTL
	// (PTTL, pipelined with the GET) instead of computing it from the
	// expiry time stored with the value (the PXAT it was written with)
	// and this machine's clock. The stored time is exact while the clocks
	// of this machine and the Redis server agree (NTP keeps them within
	// milliseconds) and nobody changes the key's TTL behind the cache's
	// back; ExactTTL costs a second command per L1 miss, and so more CPU
	// per read in the client and in Redis. Default false.
	ExactTTL bool

	// ReadsInFlight bounds the Redis round trips of reads (L1 misses) in
	// flight at once, per node of a cluster or ring (so that a node that
	// hangs holds up only the reads of its keys). A read that finds them
	// all busy waits for the next one to come back, and goes with the
	// other reads that waited, in one pipeline: under load, reads share
	// system calls and connection turns instead of queueing for them one
	// by one (see docs/benchmarks/tiered.md).
	// A read that finds a round trip free goes at once, alone; so does one
	// whose context ends before Timeout would. A pipeline carries no
	// context values of its callers (to the client's hooks, say). Default
	// 0: DefaultReadsInFlight per GOMAXPROCS; negative: every read is its
	// own round trip. One per GOMAXPROCS because when the client's CPUs are
	// what limits it, more round trips in flight than CPUs go no faster and
	// smaller batches cost more system calls (docs/benchmarks/tiered.md
	// measures the default against plain GETs and against no coalescing;
	// its command's -reads-in-flight tries other values); with a distant
	// Redis and CPUs to spare, a higher value lets more reads travel in
	// parallel.
	// On a cluster or ring of N nodes, up to N times as many round trips
	// may be in flight: a lower value keeps the total near the CPUs.
	ReadsInFlight int

	// Timeout bounds every Redis call (each read, write, publish), well
	// inside a request's budget. A call whose context can never be
	// cancelled (context.Background, say) may be given up to a millisecond
	// (and at most Timeout/16) more: the calls started within that time
	// share one deadline, and one timer. A write's deadline is also no
	// later than the client's read and write timeouts (go-redis would
	// give up on it there and send it again; see the package doc, Writes
	// and invalidation). Default DefaultTimeout (100ms).
	Timeout time.Duration

	// TombstoneTTL is how long a Delete's tombstone stays in Redis
	// (rounded up to whole milliseconds). A load's write to Redis that is
	// older than TombstoneTTL (or TTL, if shorter) minus twice Timeout when
	// its turn comes, or when Redis runs it (a Redis that hung runs what it
	// holds when it resumes), is dropped, so a tombstone, and a Set's
	// value, always outlives the loads it must stop (with a TTL of at most
	// twice Timeout, loads are never written to Redis).
	// Default DefaultTombstoneTTL (1 minute); it must be more than twice
	// Timeout.
	TombstoneTTL time.Duration

	// DegradedTTL is how long L1 keeps serving what it holds once the
	// invalidation subscription is lost (it is flushed then, and every
	// DegradedTTL while the subscription stays down, or at once when it
	// comes back), and the longest L1 lifetime of values loaded while it
	// is down: the bound on the staleness that missed invalidations can
	// cause. Default DefaultDegradedTTL (5s); at least MinPeriod.
	DegradedTTL time.Duration

	// BreakerFailures is the number of consecutive failed Redis calls
	// that opens the circuit breaker: errors, timeouts and replies that
	// the server cannot serve (LOADING, BUSY, NOAUTH, ...). A write that
	// Redis refuses while it answers reads (OOM, READONLY, NOREPLICAS,
	// MISCONF, NOPERM) fails and is counted, but is no failure for the
	// breaker: reads go on. On a Redis Cluster or a goredis.Ring each node
	// has its own breaker (see the package documentation, Faults). Default
	// DefaultBreakerFailures (5).
	BreakerFailures int

	// BreakerOpenFor is how long the breaker stays open before it lets
	// one probe call through (half-open). Default DefaultBreakerOpenFor
	// (1s).
	BreakerOpenFor time.Duration

	// WriteQueue is the capacity of the queue of Redis writes of loaded
	// values; a write that finds it full is dropped and counted.
	// Default DefaultWriteQueue (1024); at most 1<<20.
	WriteQueue int

	// Writers is the number of goroutines that drain the write queue.
	// Default DefaultWriters (2); at most 1024.
	Writers int

	// HealthCheck is how long the subscription may stay silent before the
	// Cache pings it; a ping unanswered for as long again means the
	// subscription is lost. Default DefaultHealthCheck (5s); at least
	// MinPeriod.
	HealthCheck time.Duration

	// ResubscribeDelay is the first pause before subscribing again after
	// the subscription is lost; it doubles on each failed attempt, up to
	// 32 times. Default DefaultResubscribeDelay (100ms); at least
	// MinPeriod.
	ResubscribeDelay time.Duration

	// Sharded chooses sharded Pub/Sub (SSUBSCRIBE, SPUBLISH) for
	// invalidations: ShardedAuto (the default) uses it with a
	// *goredis.ClusterClient, where plain Pub/Sub would copy every message
	// to every node.
	Sharded Sharding

	// Logger receives failed Redis reads and writes (a Set's or Delete's
	// too, although its error is also returned), invalidations that Redis
	// did not publish, lost or refused subscriptions (a subscription that never comes up is logged at each
	// failed attempt, with Redis's reply) and breaker changes (at most one
	// line per kind per second; each state the breaker changes to is a
	// kind of its own, so the last change is never the one dropped after a
	// quick open, half-open, closed). Default nil: slog.Default().
	Logger *slog.Logger

	// Clock is the time source of the breaker and of write ages, and of L1
	// unless Local.Clock is set. Default nil: the system clock.
	Clock cachekit.Clock

	// MaxBulkLen is the longest string the Cache sends to Redis: an entry
	// (the encoded value and a 28-byte header) or a key with its Prefix.
	// Redis refuses a longer one than its proto-max-bulk-len and closes
	// the connection, so the Cache does not send it: a Set returns an
	// error wrapping ErrTooLarge and changes neither tier; a loaded value
	// is kept in L1 only; a Get of a longer key does not read Redis (it
	// loads, and keeps the value in L1 only); a Delete of one removes it
	// from L1 and returns an error wrapping ErrTooLarge (no invalidation
	// can tell the other instances). Each is counted in Stats.L2TooLarge.
	// New refuses a Prefix whose invalidation channel (Prefix and
	// "invalidate") is longer. Set it to the server's proto-max-bulk-len if that
	// was lowered. Default DefaultMaxBulkLen (512 MiB, Redis's default);
	// negative values are invalid.
	MaxBulkLen int
}

// Sharding selects plain or sharded Pub/Sub for invalidations.
type Sharding uint8

const (
	ShardedAuto Sharding = iota // sharded with a *goredis.ClusterClient, plain otherwise
	ShardedOn                   // always SSUBSCRIBE/SPUBLISH (Redis 7 or later)
	ShardedOff                  // always SUBSCRIBE/PUBLISH
)

// ErrInvalidOptions is wrapped by every error that New returns for bad
// options (it is cachekit.ErrInvalidOptions).
var ErrInvalidOptions = cachekit.ErrInvalidOptions

// ClientDefaults fills in the go-redis options that a cache tier needs, for
// fields left at their zero values: ContextTimeoutEnabled (always set, so
// that Options.Timeout bounds each call), one retry at most (MaxRetries 1),
// and 1s dial, read, write and pool timeouts. It returns o; given nil, it
// returns new options holding only these defaults (and a client made from
// them dials localhost:6379).
func ClientDefaults(o *goredis.UniversalOptions) *goredis.UniversalOptions {
	if o == nil {
		o = &goredis.UniversalOptions{}
	}
	o.ContextTimeoutEnabled = true
	if o.MaxRetries == 0 {
		o.MaxRetries = 1
	}
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout} {
		if *d == 0 {
			*d = time.Second
		}
	}
	return o
}

// checkClient refuses a go-redis client that would let a call outlive its
// context's deadline, or read from replicas, and a nil pointer of a
// go-redis client type (a typed nil: the interface is not nil, but its
// methods would panic).
func checkClient(c goredis.UniversalClient) error {
	var enabled bool
	switch cl := c.(type) {
	case *goredis.Client:
		if cl == nil {
			return fmt.Errorf("the Client is a nil %T", cl)
		}
		enabled = cl.Options().ContextTimeoutEnabled
	case *goredis.ClusterClient:
		if cl == nil {
			return fmt.Errorf("the Client is a nil %T", cl)
		}
		enabled = cl.Options().ContextTimeoutEnabled
		if o := cl.Options(); o.ReadOnly || o.RouteByLatency || o.RouteRandomly {
			// An instance re-reads a key as soon as another's
			// invalidation arrives: a replica that has not yet copied
			// the write would give it the old value, kept in L1 with no
			// further message to drop it.
			return errors.New("the cluster client must read from the masters (ReadOnly, RouteByLatency and RouteRandomly send reads to replicas, which lag behind invalidations)")
		}
	case *goredis.Ring:
		if cl == nil {
			return fmt.Errorf("the Client is a nil %T", cl)
		}
		enabled = cl.Options().ContextTimeoutEnabled
	default:
		return nil
	}
	if !enabled {
		return errors.New("the client must be created with ContextTimeoutEnabled (see ClientDefaults), or a hanging Redis would hold calls past Options.Timeout")
	}
	return nil
}

// scaleDuration returns d (not negative) times f (at least 1), saturating
// at the largest Duration: converting a float64 beyond it to a Duration
// does not (on amd64 it gives the smallest, a negative Duration).
func scaleDuration(d time.Duration, f float64) time.Duration {
	if p := float64(d) * f; p < math.MaxInt64 { // float64(math.MaxInt64) is 2^63, out of range
		return time.Duration(p)
	}
	return math.MaxInt64
}

// resolve checks o and fills in the defaults.
func (o *Options[V]) resolve() error {
	bad := badOption
	if o.Client == nil {
		return bad("Client is required")
	}
	if o.Loader == nil {
		return bad("Loader is required")
	}
	if f, ok := o.Loader.(loading.LoaderFunc[string, V]); ok && f == nil {
		return bad("Loader is a nil LoaderFunc") // as loading.New refuses it
	}
	if o.Local.Loader != nil || o.Local.BulkLoader != nil || o.Local.Probe != nil {
		return bad("Local.Loader, Local.BulkLoader and Local.Probe must be nil (use Loader)")
	}
	if err := checkClient(o.Client); err != nil {
		return bad("%v", err)
	}
	if err := resolveDurations(bad,
		durationOption{"TTL", &o.TTL, DefaultTTL, 0},
		durationOption{"Timeout", &o.Timeout, DefaultTimeout, 0},
		durationOption{"TombstoneTTL", &o.TombstoneTTL, DefaultTombstoneTTL, 0},
		durationOption{"DegradedTTL", &o.DegradedTTL, DefaultDegradedTTL, MinPeriod},
		durationOption{"BreakerOpenFor", &o.BreakerOpenFor, DefaultBreakerOpenFor, 0},
		durationOption{"HealthCheck", &o.HealthCheck, DefaultHealthCheck, MinPeriod},
		durationOption{"ResubscribeDelay", &o.ResubscribeDelay, DefaultResubscribeDelay, MinPeriod},
	); err != nil {
		return err
	}
	if o.BreakerFailures < 0 || o.WriteQueue < 0 || o.Writers < 0 {
		return bad("BreakerFailures, WriteQueue and Writers must not be negative")
	}
	if o.WriteQueue > maxWriteQueue {
		return bad("WriteQueue (%d) exceeds %d", o.WriteQueue, maxWriteQueue)
	}
	if o.Writers > maxWriters {
		return bad("Writers (%d) exceeds %d", o.Writers, maxWriters)
	}
	if o.Sharded > ShardedOff {
		return bad("unknown Sharded value %d", o.Sharded)
	}
	if err := resolveMaxBulkLen(bad, &o.MaxBulkLen); err != nil {
		return err
	}
	// Checked here, before it is used below (loading.New checks it too,
	// but too late: with a NaN, the loop below would count the default
	// Local.TTL down one nanosecond at a time).
	if j := o.Local.TTLJitter; !(j >= 0 && j < 1) {
		return bad("Local.TTLJitter must be in [0, 1), got %v", j)
	}
	// Local.TTLJitter stretches L1 lifetimes by up to 1+TTLJitter/2: even
	// so, an L1 copy must not outlive its Redis entry.
	stretch := 1 + o.Local.TTLJitter/2
	if o.Local.TTL == 0 {
		// Rounded down, and checked as below, so that the default passes.
		o.Local.TTL = DefaultLocalTTL
		if f := float64(o.TTL) / stretch; f < float64(DefaultLocalTTL) {
			o.Local.TTL = time.Duration(f)
		}
		for o.Local.TTL > 0 && scaleDuration(o.Local.TTL, stretch) > o.TTL {
			o.Local.TTL--
		}
		if o.Local.TTL == 0 {
			// No lifetime fits (a TTL of a nanosecond, stretched): zero
			// would mean values never go stale in L1.
			return bad("TTL (%v) is too short for Local.TTLJitter (%v): no Local.TTL fits within it", o.TTL, o.Local.TTLJitter)
		}
	}
	if scaleDuration(o.Local.TTL, stretch) > o.TTL {
		return bad("Local.TTL (%v), which Local.TTLJitter stretches up to %v, exceeds TTL (%v)",
			o.Local.TTL, scaleDuration(o.Local.TTL, stretch), o.TTL)
	}
	if o.TombstoneTTL-o.Timeout <= o.Timeout { // TombstoneTTL <= 2*Timeout, which could overflow
		return bad("TombstoneTTL (%v) must be more than twice Timeout (%v)", o.TombstoneTTL, o.Timeout)
	}
	if o.BreakerFailures == 0 {
		o.BreakerFailures = DefaultBreakerFailures
	}
	if o.WriteQueue == 0 {
		o.WriteQueue = DefaultWriteQueue
	}
	if o.Writers == 0 {
		o.Writers = DefaultWriters
	}
	if o.ReadsInFlight == 0 {
		o.ReadsInFlight = DefaultReadsInFlight * runtime.GOMAXPROCS(0)
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if err := checkChannel(bad, o.Prefix, o.MaxBulkLen); err != nil {
		return err
	}
	if o.Codec == nil {
		o.Codec = DefaultCodec[V]()
	}
	if err := recovered(func() error { _ = o.Codec.Name(); return nil }); err != nil {
		// A typed nil (a nil *JSONCodec[V], say) whose Name panics:
		// New reads it for the fingerprint.
		return bad("Codec %T: Name panicked: %v", o.Codec, err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Local.Clock == nil {
		o.Local.Clock = o.Clock
	}
	return nil
}
