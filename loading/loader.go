package loading

import (
	"context"
	"time"
)

// Loader loads the value of one key from the source the cache fronts.
//
// Load runs on a goroutine of the cache, never on the caller's, with a
// context that keeps the values of the context of the Get that started it
// but not its cancellation: it is cancelled by Options.LoadTimeout and by
// Close. Load must honour it (Close waits for loads in flight to return).
//
// Load reports a key that does not exist by returning an error that
// wraps ErrNotFound; the cache remembers that answer for
// Options.NotFoundTTL. Any other error is a failure, remembered for
// Options.ErrorTTL. A panic or a runtime.Goexit in Load becomes a
// *PanicError for every caller waiting for the key and is not remembered.
//
// An error that wraps ErrStale (another loading.Cache's answer for a stale
// value, passed on), from Load or LoadMany, is a failure too: Get returns
// it without the value, and a caller who takes errors.Is(err, ErrStale) to
// mean a usable value would use the zero value. Pass such a value on as a
// value instead: return it with a nil error, after LimitTTL(ctx, 0) so
// that this cache keeps it only as a stale value (within MaxStale).
//
// Load may call the cache for other keys; a call that would wait for a key
// that this call chain is loading fails with ErrReentrant instead, when it
// passes ctx (or a context derived from it): the chain travels in ctx.
type Loader[K comparable, V any] interface {
	Load(ctx context.Context, key K) (V, error)
}

// LoaderFunc adapts a function to the Loader interface.
type LoaderFunc[K comparable, V any] func(ctx context.Context, key K) (V, error)

// Load calls f(ctx, key).
func (f LoaderFunc[K, V]) Load(ctx context.Context, key K) (V, error) { return f(ctx, key) }

// BulkLoader loads the values of many keys in one call (one query, one
// round trip).
//
// LoadMany gets distinct keys, none of them being loaded by another call
// for the same state of the cache, and owns the slice: after ExpireAll,
// Delete, Set or InvalidateAll, a new call may get a key that an older
// one, which goes on for its own waiters, is still loading. Its context is
// the same as Load's. It
// reports its results so:
//
//   - a key present in the returned map was loaded with that value, even
//     when the error is not nil (partial results are kept);
//   - with a nil error, or with a *BulkError[K] (possibly wrapped, as by
//     fmt.Errorf's %w), a key absent from the map (and from
//     BulkError.Errors) does not exist: it is remembered as not found, as
//     if its error were ErrNotFound;
//   - a *BulkError[K] gives per-key errors in its Errors map (ErrNotFound
//     among them, for an explicit negative answer), also when it is
//     joined with other errors (errors.Join);
//   - any other error, a *BulkError[K] joined with others included, fails
//     every key absent from the map (and from BulkError.Errors) with that
//     error.
//
// Keys in the map that were not asked for are ignored. A panic or a
// runtime.Goexit fails every key of the call with a *PanicError.
type BulkLoader[K comparable, V any] interface {
	LoadMany(ctx context.Context, keys []K) (map[K]V, error)
}

// BulkLoaderFunc adapts a function to the BulkLoader interface.
type BulkLoaderFunc[K comparable, V any] func(ctx context.Context, keys []K) (map[K]V, error)

// LoadMany calls f(ctx, keys).
func (f BulkLoaderFunc[K, V]) LoadMany(ctx context.Context, keys []K) (map[K]V, error) {
	return f(ctx, keys)
}

// Prober answers misses from a faster source than the loader, typically a
// second cache tier (Redis), without the goroutine hand-off of a load.
//
// Probe is called by the Get that starts a load of key, on the caller's
// goroutine, with the caller's context, after the load is registered (so
// other callers of the key wait for it, and Delete, Set and InvalidateAll
// overtake it as they overtake any load). If it reports found, value is
// the load's result: stored (fresh for at most ttl when ttl >= 0, as with
// LimitTTL) and given to every waiter; the loader is not called, and the
// load is not counted in Stats.Loads. Otherwise the load goes on as usual
// on a goroutine of the cache, starting from the context next (derived
// from ctx, or nil for ctx), through which the probe may pass what it
// learned to the loader as context values. A probe that panics counts as
// not found. Probe must return promptly: a caller whose context ends
// while Probe runs waits for it. Probe may call the cache for other keys;
// like a loader's, a call that would wait for key (or another key that its
// call chain is loading) fails with ErrReentrant instead.
type Prober[K comparable, V any] interface {
	Probe(ctx context.Context, key K) (next context.Context, value V, ttl time.Duration, found bool)
}
