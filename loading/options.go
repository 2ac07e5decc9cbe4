package loading

import (
	"fmt"
	"time"

	"github.com/cachekit/cachekit"
)

// Defaults of the options whose zero value means "the default".
const (
	DefaultErrorTTL               = time.Second
	DefaultLoadTimeout            = 30 * time.Second
	DefaultMaxConcurrentRefreshes = 16
	DefaultMaxManyLoads           = 16
)

// Options configures a Cache. Loader or BulkLoader is required; every other
// field has a usable zero value.
type Options[K comparable, V any] struct {
	// Loader loads one key. Get uses it; so does GetMany when BulkLoader
	// is nil (one call per missing key, concurrently, at most MaxManyLoads
	// at once), and, when both are set, a GetMany (or its refresh) that
	// has a single key to load. At least one of Loader and BulkLoader is
	// required. Default nil.
	Loader Loader[K, V]

	// BulkLoader loads many keys in one call. GetMany uses it for all its
	// missing keys at once (a single one goes to Loader if set); Get uses
	// it (with one key) when Loader is nil.
	// Default nil.
	BulkLoader BulkLoader[K, V]

	// MaxEntries bounds the cache by its number of entries (cached values
	// and cached errors alike), as cachekit.Options.MaxEntries. At most
	// one of MaxEntries and MaxWeight may be set; neither means unbounded.
	// Default 0.
	MaxEntries int

	// MaxWeight bounds the cache by the sum of the entries' weights as
	// reported by Weigher, which it requires. A cached error or not-found
	// answer weighs 1. Default 0.
	MaxWeight uint64

	// Weigher returns a value's weight, as cachekit.Options.Weigher. It is
	// called with the key's lock in the load table held, so it must not
	// call this cache. Required with MaxWeight, not allowed without it.
	// Default nil.
	Weigher func(key K, value V) uint32

	// Policy names the eviction policy of a bounded cache, as
	// cachekit.Options.Policy. Default "" (W-TinyLFU).
	Policy string

	// InitialCapacity is the number of entries to make room for up front.
	// Default 0.
	InitialCapacity int

	// TTL is how long a loaded (or Set) value stays fresh. After it the
	// value is stale: it is served only within MaxStale, otherwise the
	// next Get loads it again. Zero means values never go stale (they
	// still leave the cache by eviction, Delete, InvalidateAll, and
	// become stale by ExpireAll). Negative values are invalid. Default 0.
	TTL time.Duration

	// TTLJitter spreads every load's lifetimes (TTL, RefreshAfter,
	// NotFoundTTL; not MaxStale) by one random factor uniform in
	// 1 ± TTLJitter/2 (0.1 gives ±5%), so that values loaded together
	// do not expire together; a failure's ErrorTTL by a factor uniform in
	// [1, 1 + TTLJitter], never shorter. It must be in [0, 1). Default 0.
	TTLJitter float64

	// RefreshAfter is the age after which a fresh value is reloaded in
	// the background (refresh ahead): the Get that finds it due returns
	// the value at once and starts one reload; the TTL still applies if
	// the reload hangs or fails. Zero disables refresh ahead. Must be
	// below TTL when TTL is set. Default 0.
	RefreshAfter time.Duration

	// MaxStale is how long past its TTL a value may still be served,
	// marked stale (ErrStale): the first Get that finds it stale starts
	// one background reload (stale-while-revalidate), and while reloads
	// fail the value keeps being served with the failure wrapped in the
	// error (stale-if-error), until MaxStale is over; then Get returns
	// the failure. ExpireAll makes every value stale, with MaxStale
	// counted from the first ExpireAll after the value's load began (a
	// later one does not extend it). Zero means a value is never served
	// after its TTL. Negative values are invalid. Default 0.
	MaxStale time.Duration

	// ErrorTTL is how long a failed load is remembered: Get returns the
	// same error without calling the loader until it passes, so a failing
	// source sees at most one call per key per ErrorTTL (TTLJitter only
	// lengthens it, by up to TTLJitter). A stale value
	// within MaxStale is served instead of the error. Zero means
	// DefaultErrorTTL (1s); a negative value disables error caching.
	// Panics are never cached.
	ErrorTTL time.Duration

	// NotFoundTTL is how long a not-found answer (ErrNotFound) is
	// remembered as a negative entry. Zero means the same as TTL (so
	// forever when TTL is zero); a negative value disables negative
	// caching. Default 0.
	NotFoundTTL time.Duration

	// LoadTimeout bounds each loader call: its context is cancelled after
	// it. A load that ends by this timeout is a failure like any other
	// (cached for ErrorTTL); its error wraps context.DeadlineExceeded and
	// says that the load timed out, so that callers who get it later from
	// the cache can tell it from their own deadline. Zero means
	// DefaultLoadTimeout (30s); a negative value means no timeout. Callers
	// waiting for a load are bounded by their own contexts, whatever this
	// is.
	LoadTimeout time.Duration

	// MaxConcurrentRefreshes bounds the background reloads (refresh
	// ahead, stale-while-revalidate, ExpireAll) running at once, per
	// cache. A reload that finds no free slot is skipped; a later Get of
	// the key tries again. A GetMany with a BulkLoader refreshes all its
	// due keys in one call, using one slot (a single due key through
	// Loader, if set). Zero means
	// DefaultMaxConcurrentRefreshes (16). Negative values are invalid.
	MaxConcurrentRefreshes int

	// MaxManyLoads bounds the Load calls that one GetMany without a
	// BulkLoader has in flight at once: its other missing keys are loaded
	// as those finish, so that a GetMany of many keys does not call the
	// source for all of them at the same moment. Zero means
	// DefaultMaxManyLoads (16). Negative values are invalid.
	MaxManyLoads int

	// Clock is the time source for every lifetime above and for the
	// underlying cache. Default nil: the system's monotonic clock.
	// Its Now must not panic: a panic on a caller's goroutine leaves no
	// lock held and reaches the caller, but a load runs on a goroutine of
	// its own, which reads the Clock to time the load and to store its
	// result, and a panic there ends the program, as any panic that no
	// caller can recover does. New returns an error if its first reading
	// panics (a nil pointer of a clock type, say).
	Clock cachekit.Clock

	// Probe, if set, is asked before the loader by the caller of Get that
	// starts a load, on its own goroutine (see Prober). Background
	// reloads and GetMany do not use it. Default nil.
	Probe Prober[K, V]
}

func (o *Options[K, V]) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("loading: %w: "+format, append([]any{cachekit.ErrInvalidOptions}, args...)...)
	}
	if f, ok := o.Loader.(LoaderFunc[K, V]); ok && f == nil {
		return bad("Loader is a nil LoaderFunc")
	}
	if f, ok := o.BulkLoader.(BulkLoaderFunc[K, V]); ok && f == nil {
		return bad("BulkLoader is a nil BulkLoaderFunc")
	}
	switch {
	case o.Loader == nil && o.BulkLoader == nil:
		return bad("Loader or BulkLoader is required")
	case o.TTL < 0:
		return bad("TTL is negative (%v)", o.TTL)
	case !(o.TTLJitter >= 0 && o.TTLJitter < 1):
		return bad("TTLJitter must be in [0, 1), got %v", o.TTLJitter)
	case o.RefreshAfter < 0:
		return bad("RefreshAfter is negative (%v)", o.RefreshAfter)
	case o.TTL > 0 && o.RefreshAfter >= o.TTL:
		return bad("RefreshAfter (%v) must be below TTL (%v)", o.RefreshAfter, o.TTL)
	case o.MaxStale < 0:
		return bad("MaxStale is negative (%v)", o.MaxStale)
	case o.MaxConcurrentRefreshes < 0:
		return bad("MaxConcurrentRefreshes is negative (%d)", o.MaxConcurrentRefreshes)
	case o.MaxManyLoads < 0:
		return bad("MaxManyLoads is negative (%d)", o.MaxManyLoads)
	}
	return nil
}
