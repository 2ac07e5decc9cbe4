// Package cachekit provides Cache, a typed, concurrent, bounded in-memory
// cache with per-entry expiry.
//
// # When to use it
//
// Use a Cache to keep recently or frequently used values of type V, looked
// up by keys of any comparable type K, in front of something slower. Bound
// it by entry count (Options.MaxEntries) or by a weight of your choosing
// (Options.MaxWeight with Options.Weigher); give entries a time to live
// (Options.DefaultTTL, Cache.SetWithTTL), spread by Options.TTLJitter so
// that entries written together do not all expire together. For an
// unbounded concurrent map without expiry, sync.Map is simpler.
//
// # Concurrency
//
// Every method of Cache is safe for concurrent use. A lookup takes no
// lock; writes lock one of many index segments. The eviction policy (an
// adaptive W-TinyLFU) is a single-threaded structure behind a maintenance
// lock that readers never wait for: reads and writes are recorded in
// buffers and applied in batches, by whichever goroutine finds the lock
// free when a buffer fills (a Get that fills its stripe of the read buffer
// runs that pass itself, and the pass takes index segment locks to drop
// its victims). Expired entries are never returned, and a background
// goroutine per cache reclaims them without reads; Close stops it.
//
// Callbacks (Options.OnEvict, Options.Weigher) are never called with a lock
// of the cache held, so they may call back into the cache.
//
// # Guarantees
//
//   - A hash collision never returns another key's value: keys are compared
//     in full, and the hash seed is random per cache.
//   - Each entry that leaves the cache is reported to OnEvict exactly once,
//     with its Cause.
//   - Once concurrent writes have been applied (within a maintenance pass,
//     at the latest within a second), the cache holds no more than its bound.
//   - Get, Set and Delete are linearizable; a bounded cache may additionally
//     drop any entry at any time (eviction), but never returns a value that
//     was overwritten or deleted before the read began.
package cachekit
