package loading

import (
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit"
)

// counters are the cache's own counters. Hits and misses are derived from
// the core cache's (see Stats), so the hit path counts nothing here.
type counters struct {
	unusable     atomic.Uint64 // core hits whose record could not answer
	noWait       atomic.Uint64 // of those and the core misses: failed at once, waiting for no load
	staleHits    atomic.Uint64
	errorHits    atomic.Uint64
	shared       atomic.Uint64
	loads        atomic.Uint64
	loadErrors   atomic.Uint64
	loadNanos    atomic.Uint64
	refreshes    atomic.Uint64
	refreshSkips atomic.Uint64
}

// Stats is a snapshot of a Cache's counters since it was created. A lookup
// is one key of a Get or GetMany.
type Stats struct {
	Hits      uint64 // lookups answered with a fresh cached value
	StaleHits uint64 // lookups answered with a stale value (MaxStale, ExpireAll)
	ErrorHits uint64 // lookups answered with a remembered error or not-found answer
	// Misses are lookups that found nothing usable in the cache and went
	// on to wait for a load (or found, on a second look under the key's
	// lock, the result of a load that had just finished). A lookup that
	// fails at once instead, with ErrReentrant or because its context
	// has already ended, counts in none of Hits, StaleHits, ErrorHits
	// and Misses.
	Misses uint64
	// Shared are the misses that joined a load already in flight instead
	// of starting one: Shared/Misses is the deduplication rate.
	Shared uint64

	// Loads counts loader calls (Load or LoadMany), foreground and
	// background. LoadErrors counts those that failed: returned an error
	// other than a not-found answer (for LoadMany, failed at least one key
	// so), panicked or called runtime.Goexit.
	Loads, LoadErrors uint64
	// LoadTime is the total time spent in loader calls, on the cache's
	// clock; LoadTime / Loads is the mean load latency (AvgLoadTime).
	LoadTime time.Duration

	// Refreshes counts keys reloaded in the background (refresh ahead,
	// stale-while-revalidate, after ExpireAll); RefreshesSkipped the
	// background reloads not started for lack of a slot
	// (MaxConcurrentRefreshes), to be retried by a later read.
	Refreshes, RefreshesSkipped uint64

	// Core holds the underlying cache's statistics: entries (values and
	// remembered errors), evictions, expirations.
	Core cachekit.Stats
}

// AvgLoadTime returns LoadTime / Loads, or 0 before any load.
func (s Stats) AvgLoadTime() time.Duration {
	if s.Loads == 0 {
		return 0
	}
	return s.LoadTime / time.Duration(s.Loads)
}

// Stats returns the cache's counters, read one at a time (not atomically
// together).
func (c *Cache[K, V]) Stats() Stats {
	// Our counters first: each of unusable, staleHits and errorHits
	// follows a core hit, so reading them before the core's keeps the
	// subtraction below from going negative.
	s := Stats{
		StaleHits:        c.stats.staleHits.Load(),
		ErrorHits:        c.stats.errorHits.Load(),
		Shared:           c.stats.shared.Load(),
		Loads:            c.stats.loads.Load(),
		LoadErrors:       c.stats.loadErrors.Load(),
		LoadTime:         time.Duration(c.stats.loadNanos.Load()),
		Refreshes:        c.stats.refreshes.Load(),
		RefreshesSkipped: c.stats.refreshSkips.Load(),
	}
	// noWait follows a core miss or an unusable record: read before
	// them, it never exceeds their sum.
	noWait := c.stats.noWait.Load()
	unusable := c.stats.unusable.Load()
	s.Core = c.core.Stats()
	if n := s.StaleHits + s.ErrorHits + unusable; s.Core.Hits >= n {
		s.Hits = s.Core.Hits - n
	}
	if n := s.Core.Misses + unusable; n >= noWait {
		s.Misses = n - noWait
	}
	return s
}
