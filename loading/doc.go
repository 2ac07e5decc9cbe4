// Package loading is a read-through cache that keeps a slow or failing
// source from being overwhelmed: a Cache loads a missing key through a
// Loader (or a BulkLoader for many keys), once, however many callers want
// it, and remembers values, failures and not-found answers for configured
// lifetimes. It is built on a cachekit.Cache, which bounds it (MaxEntries,
// MaxWeight) and evicts with its policy.
//
// # When to use it
//
// Put a Cache in front of a database or service whose values may be a
// little old: read with Get or GetMany and let the cache call the source.
// It deals with the ways a cache in front of a source fails in production:
//
//   - Stampedes: concurrent misses of one key make one loader call; the
//     other callers wait for it and share its result.
//   - Slow sources: with RefreshAfter a hot key is reloaded in the
//     background before it expires, and with MaxStale a value past its
//     TTL is served (marked stale) while one reload runs; no caller waits.
//   - Cancelled requests: a load runs on its own goroutine with the first
//     caller's context values but not its cancellation (bounded by
//     LoadTimeout instead), so a caller that gives up does not fail the
//     others, and its result is still cached.
//   - Failing sources: a failure is remembered for ErrorTTL, so a source
//     that fails sees at most one call per key per ErrorTTL instead of
//     every request; within MaxStale the last good value is served instead
//     of the failure (stale-if-error).
//   - Missing keys: a loader's ErrNotFound is remembered as a negative entry
//     for NotFoundTTL.
//   - Synchronised expiry: TTLJitter spreads the lifetimes of values loaded
//     together.
//   - Invalidation under load: ExpireAll makes every value stale without
//     deleting it, so the source is reloaded key by key, in the
//     background, while the old values are served.
//
// # An entry's life
//
// A load's result is stored as one entry holding a value, a remembered
// error, or both. With t the time the value was loaded:
//
//	t … t+RefreshAfter        fresh: served as is
//	t+RefreshAfter … t+TTL    fresh, due: served as is; one background reload starts
//	t+TTL … t+TTL+MaxStale    stale: served with ErrStale; one background reload starts
//	after t+TTL+MaxStale      gone: the next Get waits for a load
//
// A failed reload leaves the value in place (fresh or stale as above) and
// blocks further reloads of the key for ErrorTTL; once the value is past
// MaxStale, Get returns the failure until ErrorTTL ends. A failed load
// without a value to fall back on is returned as the error, to every
// waiter and to every Get until ErrorTTL ends. Get's error tells the cases
// apart: nil for a fresh value; errors.Is(err, ErrStale) for a stale value
// (also errors.Is(err, sourceErr) if the last reload failed with
// sourceErr); anything else comes without a value. A caller for whom a stale
// value will do writes
//
//	v, err := users.Get(ctx, id)
//	if err != nil && !errors.Is(err, loading.ErrStale) {
//		return err
//	}
//
// Stale values are served only when MaxStale is set.
//
// # Concurrency contract
//
// Every method is safe for concurrent use. For each key:
//
//   - At most one load runs at a time, in this cache, whether started by
//     Get, GetMany or a background reload; callers that miss the key while
//     it runs wait for it. (Delete, Set and InvalidateAll overtake a load:
//     it goes on for its waiters, and a later miss starts a new one. So
//     does ExpireAll, for a caller that misses the key after it: the old
//     load goes on for its own waiters while the new one runs.)
//   - A load's result is stored before its waiters wake, so their next
//     Get sees it; before a load starts, the cache is checked again under
//     the key's lock, so a value stored meanwhile is not loaded again.
//   - A Delete, Set or InvalidateAll that happens while a load of the key
//     is in flight wins: the load's result is given to its waiters but
//     never stored. A load that was in flight during ExpireAll stores its
//     result as already stale, and a caller that misses the key after
//     ExpireAll does not wait for it but starts a new load (whose result
//     then wins).
//   - Each waiter waits at most until its own context ends, and then
//     returns ctx.Err() at once; the load goes on and is cached. A caller
//     whose context has already ended starts no load.
//   - A background reload never makes a caller wait, and at most
//     MaxConcurrentRefreshes run at once; one that finds no free slot is
//     skipped, and the next read of the key tries again.
//   - A loader that panics or calls runtime.Goexit fails every waiter of
//     its keys with a *PanicError (value and stack); nothing is cached and
//     the keys load normally afterwards. So does a Weigher that panics
//     while a loaded value is stored, and a Prober that calls
//     runtime.Goexit (a Prober's panic counts as not found).
//   - A loader (or Prober) that asks the cache for a key that its own
//     call chain is loading gets ErrReentrant at once instead of waiting
//     for itself. The chain travels in the context: the loader must pass
//     its ctx (or one derived from it) to the cache. Asked with another
//     context (context.Background() in a helper), the loader waits for
//     its own load until that context ends; LoadTimeout cannot end the
//     wait, as the loader is the one waiting. A cycle through loads started by unrelated callers
//     (A's load waits for B's, whose loader asks for A), or through a
//     background reload (which nobody waits for, so it starts a chain of
//     its own, in this cache and in every other cache its loader calls),
//     is not detected; each waiter's context and LoadTimeout bound it.
//   - Loaders run on goroutines of the cache with a context derived from
//     context.WithoutCancel of the starting caller's context (its values
//     are visible), cancelled after LoadTimeout and by Close.
//
// The lock of a key's part of the load table is held only briefly, never
// while a loader runs; the underlying cache's writes (and the Weigher) run
// under it, so a Weigher must not call the cache.
//
// # Goroutines and Close
//
// The cache runs no goroutine of its own besides the underlying
// cachekit.Cache's: each load runs on a goroutine that exists only while
// the loader runs. Close cancels the contexts of the loads in flight
// (foreground and background), waits until every loader has returned, and
// closes the underlying cache; afterwards Get and GetMany return ErrClosed.
// A loader that ignores its context delays Close.
//
// # Statistics
//
// Stats counts hits (fresh, stale, remembered errors), misses, misses that
// shared a load in flight (the deduplication rate), loader calls, their
// failures and total time, background reloads and the ones skipped for
// lack of a slot, plus the underlying cache's statistics.
package loading
