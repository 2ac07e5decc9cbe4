package cachekit

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cachekit/cachekit/internal/policy"
)

// MaxInitialCapacity is the largest Options.InitialCapacity: 2^32 on 64-bit
// platforms, where room for that many entries is an index of tens of GiB
// already, and 2^26-1 (math.MaxInt>>5) on 32-bit ones. A larger value is
// a mistake, reported as one rather than tried.
const MaxInitialCapacity = min(1<<32, math.MaxInt>>5)

// Options configures a Cache. The zero value is a valid configuration: an
// unbounded cache whose entries never expire.
type Options[K comparable, V any] struct {
	// MaxEntries bounds the cache by its number of entries. At most one of
	// MaxEntries and MaxWeight may be set; when neither is, the cache is
	// unbounded and only expiry, Delete and Clear remove entries. Default 0.
	MaxEntries int

	// MaxWeight bounds the cache by the sum of its entries' weights as
	// reported by Weigher, which it requires. Default 0.
	MaxWeight uint64

	// Weigher returns an entry's weight; it is called once per Set (and
	// per pair of SetMany) on the caller's goroutine, outside any lock, so
	// concurrent Sets call it concurrently; it must be safe for that, fast
	// and deterministic. If it panics, the panic goes on to the caller of
	// Set, which has then changed nothing. An entry heavier than
	// MaxWeight is refused by Set. A weight of 0 is allowed, and such an
	// entry counts nothing against MaxWeight: the bound does not limit how
	// many of them the cache holds (they are evicted only when heavier
	// entries push the total over MaxWeight and the policy picks them).
	// Required with MaxWeight, not allowed without it. Default nil.
	Weigher func(key K, value V) uint32

	// DefaultTTL is the time to live of entries stored by Set and SetMany.
	// Zero means they never expire. Negative values are invalid. Default 0.
	DefaultTTL time.Duration

	// TTLJitter spreads every TTL uniformly over ±TTLJitter/2 of its
	// length (0.1 gives ±5%), so entries written together do not expire
	// together. It must be in [0, 1). Default 0 (no jitter).
	TTLJitter float64

	// Policy names the eviction policy of a bounded cache: "" or "default"
	// for the default (W-TinyLFU with an adaptive window), or one of
	// PolicyNames(), optionally with a parameter after a colon
	// ("lrfu:0.001"); names are matched without regard to case, and
	// spaces around the name and the parameter are ignored. An unknown name, or a policy for an
	// unbounded cache, is an error. Default "".
	Policy string

	// InitialCapacity is the number of entries to make room for up front,
	// to avoid growing the index while the cache fills (with MaxEntries,
	// at most MaxEntries are). Without MaxEntries it also sizes the index's
	// segments: the index has a segment per 16,384 entries of MaxEntries,
	// or else of InitialCapacity (up to 4,096), and at most 32 per
	// GOMAXPROCS otherwise, so the growth of a segment, which rehashes it
	// under its lock, stays short; a cache bounded by weight (or
	// unbounded) that will hold millions of entries should set it. At
	// most MaxInitialCapacity. Default 0.
	InitialCapacity int

	// OnEvict, if set, is called once for every entry that leaves the
	// cache, with the reason. It is never called with a lock of the cache
	// held, so it may call the cache (even for the same key). It runs on
	// the goroutine that removed the entry: the caller of Delete, Set or
	// Clear for those causes (and for an expired entry that a Delete or
	// Set removed, reported as expired); otherwise, for capacity and
	// expiry, whichever goroutine ran the cache's maintenance (a caller of
	// Clear or Stats; a caller of Get, Set or Delete when its read or
	// write completed a batch, as Cache explains; or the cache's
	// background goroutine). Calls may therefore run concurrently, and
	// removals reported by different goroutines may arrive out of order
	// (one goroutine reports its own removals in order). A slow callback
	// slows the goroutine that runs it, and a Set or Delete that found the
	// write queue full queues its record only after its own report, so
	// that key's later writes reach the policy (Stats.Weight, the bound)
	// only once it returns; on the background goroutine it
	// delays the reclaiming of expired entries (never their expiry: Get
	// does not return them). A callback that refers to the Cache keeps it
	// from being stopped by the garbage collector: Close it. A panic in
	// the callback goes on to the goroutine that ran it (on the background
	// goroutine, it ends the program), but only once the cache is
	// consistent again and the other removals of the same batch are
	// reported. Default nil.
	OnEvict func(key K, value V, cause Cause)

	// DisableStats turns off the counting of hits and misses: Stats then
	// reports both as 0, and its other counters as usual. While the cache
	// is less than half full (with the default policy, "fifo" or "random":
	// the other policies see every read), and always for an unbounded
	// cache, that count is all the shared memory a Get hit writes: an
	// atomic add on a striped counter, which on amd64 is a locked
	// instruction and a full memory barrier (the next lookup's loads wait
	// for it).
	// Once the eviction policy needs to see reads, a hit writes them to
	// the read buffer either way. It does not change what the policy sees
	// or evicts. Default false: hits and misses are counted.
	DisableStats bool

	// Clock is the time source for expiry. Default nil: the system's
	// monotonic clock, read through a cached timestamp refreshed every
	// millisecond by the cache's background goroutine while the cache holds
	// entries with a TTL (so the cache sees an entry expire up to about a
	// millisecond after its deadline, more if the process is starved of
	// CPU; "never returned once expired" is by this clock). Tests
	// may supply a fake clock; reads then call Clock.Now every time they
	// find an entry with a TTL. The cache counts time from the clock's
	// reading at New, as a time.Duration (about ±292 years): a clock that
	// later reads further from it (a fake clock that read the zero
	// time.Time at New and is then set to today) is taken to stand at that
	// limit, where every TTL has run out (ahead) or none ever runs out
	// (behind). Start a fake clock at a real date. Now must not panic: New
	// returns an error wrapping ErrInvalidOptions if its reading at New
	// panics (a nil pointer of a clock type, say), but a panic later, on
	// the cache's background goroutine, ends the program.
	Clock Clock
}

// Clock tells the time. Implementations must be safe for concurrent use.
type Clock interface {
	Now() time.Time
}

// ErrInvalidOptions is wrapped by every error that New returns.
var ErrInvalidOptions = errors.New("cachekit: invalid options")

func (o *Options[K, V]) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
	}
	switch {
	case o.MaxEntries < 0:
		return bad("MaxEntries is negative (%d)", o.MaxEntries)
	case o.MaxEntries > 0 && o.MaxWeight > 0:
		return bad("MaxEntries and MaxWeight are both set; choose one bound")
	case o.MaxWeight > 0 && o.Weigher == nil:
		return bad("MaxWeight needs a Weigher")
	case o.Weigher != nil && o.MaxWeight == 0:
		return bad("Weigher is set but MaxWeight is not")
	case o.DefaultTTL < 0:
		return bad("DefaultTTL is negative (%v)", o.DefaultTTL)
	case !(o.TTLJitter >= 0 && o.TTLJitter < 1):
		return bad("TTLJitter must be in [0, 1), got %v", o.TTLJitter)
	case strings.TrimSpace(o.Policy) != "" && o.MaxEntries == 0 && o.MaxWeight == 0:
		return bad("Policy %q needs MaxEntries or MaxWeight", o.Policy)
	case o.InitialCapacity < 0:
		return bad("InitialCapacity is negative (%d)", o.InitialCapacity)
	case o.InitialCapacity > MaxInitialCapacity:
		return bad("InitialCapacity %d is above MaxInitialCapacity (%d)", o.InitialCapacity, MaxInitialCapacity)
	}
	return nil
}

// PolicyNames returns the names of the eviction policies that
// Options.Policy accepts, besides "default".
func PolicyNames() []string { return policy.Names() }
