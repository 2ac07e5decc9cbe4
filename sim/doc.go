// Package sim measures the hit ratio of cache eviction policies by replaying
// access traces.
//
// A trace is a sequence of 64-bit keys. Reader and Load read traces from
// text files with one key per line, gzipped or not (see Reader for the
// format). A Trace holds a loaded trace and builds the caches to replay it
// through, by name (Names lists them):
//
//   - any policy of the cache's policy registry ("tinylfu", "default", and
//     whatever else is registered), driven directly, one request at a time;
//   - "cache": the real concurrent cachekit.Cache, bounded by MaxEntries,
//     driven by Get, then Set on a miss, from a single goroutine;
//   - "opt": Bélády's optimum (MIN), which knows the future of the trace and
//     evicts the resident key whose next use is farthest away;
//   - "opt-bypass": Bélády's optimum allowed to refuse a key whose next use
//     is later than every resident key's, the ceiling for caches that filter
//     admissions.
//
// Every replay is a request of each key in order: a hit if the cache holds
// the key, otherwise a miss after which the cache may admit it. All entries
// weigh 1, so a capacity is a number of entries.
//
// # Concurrency
//
// Nothing in this package is safe for concurrent use unless its
// documentation says so. A Trace is: several goroutines may build caches
// from one Trace and replay it at the same time, each through its own
// cache; a Cache must be used by one goroutine at a time.
//
// # Reproducibility
//
// Text keys are hashed with a fixed function, and registered policies are
// seeded with a fixed seed, so replaying the same trace through the same
// policy gives the same result on every run. The exception is "cache":
// the concurrent cache seeds itself at random and runs part of its
// maintenance in the background, so its results may vary slightly.
package sim
