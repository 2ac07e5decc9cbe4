package redis

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/loading"
)

type counters struct {
	l2Hits, l2Misses, l2Incompatible, l2Errors, l2Skipped atomic.Uint64
	l2Reads, l2ReadNanos, l2ReadMax                       atomic.Uint64
	l2Writes, l2WritesRejected, l2WriteErrors             atomic.Uint64
	l2WritesDropped, l2TooLarge                           atomic.Uint64
	loads, loadErrors                                     atomic.Uint64
	sent, received, ignored, badMessages                  atomic.Uint64
	lagNanos, lagMax                                      atomic.Uint64
	subscriptions, losses, flushes                        atomic.Uint64
}

func (s *counters) observeRead(d time.Duration) {
	s.l2Reads.Add(1)
	s.l2ReadNanos.Add(uint64(max(d, 0)))
	maxStore(&s.l2ReadMax, uint64(max(d, 0)))
}

func (s *counters) observeLag(d time.Duration) {
	addSaturating(&s.lagNanos, uint64(max(d, 0)))
	maxStore(&s.lagMax, uint64(max(d, 0)))
}

// addSaturating adds v to a, stopping at the largest Duration: a sender
// whose clock is far behind (never set: at 1970) makes each of its
// invalidations decades late, and a few of them would otherwise wrap
// InvalidationLag to a negative Duration.
func addSaturating(a *atomic.Uint64, v uint64) {
	for {
		cur := a.Load()
		next := cur + v
		if next < cur || next > math.MaxInt64 {
			next = math.MaxInt64
		}
		if next == cur || a.CompareAndSwap(cur, next) {
			return
		}
	}
}

func maxStore(a *atomic.Uint64, v uint64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// Stats is a snapshot of a Cache's counters since it was created, read one
// at a time (not atomically together).
type Stats struct {
	// L1Hits are Gets answered by L1 (fresh or stale values); Local has
	// L1's full statistics. Its Loads are the loads L1 ran: those of
	// GetMany and of background reloads (one Redis read each, then perhaps
	// one Loader call), and those of Gets that Redis did not answer (a
	// Get's Redis read is a probe before any load: answered, it is counted
	// in L2Hits, not in Local.Loads nor Local.LoadTime). So the same L1
	// miss answered by Redis counts in Local.Loads through GetMany and not
	// through Get; L2Reads counts the reads of Redis of both.
	L1Hits uint64
	Local  loading.Stats

	// L2Hits are L1 misses (and background reloads) answered by Redis: a
	// Get answered by a stale L1 value whose reload Redis answers counts
	// in L1Hits and in L2Hits. L2Misses found no value
	// there (no key, or a tombstone); L2Incompatible found one this cache
	// cannot decode (read as a miss, the key then loaded, but counted
	// here and not in L2Misses). L2Errors are reads that
	// failed (timeout, network, unavailable server), not counting those
	// that failed because their caller's context ended; L2Skipped are
	// Redis calls not made because the circuit breaker was open (reads
	// and writes; a loaded value's write refused so also counts in
	// L2WritesDropped).
	L2Hits, L2Misses, L2Incompatible, L2Errors, L2Skipped uint64
	// L2Reads counts reads of Redis (each key of a coalesced pipeline
	// counts once; see Options.ReadsInFlight); L2ReadTime is their total
	// duration, from the start of each read to its answer, waiting for a
	// pipeline included (L2ReadTime / L2Reads is the mean), L2ReadMax the
	// longest.
	L2Reads               uint64
	L2ReadTime, L2ReadMax time.Duration

	// L2Writes are writes to Redis that succeeded (Set, Delete, loaded
	// values). L2WritesRejected are writes of loaded values that lost
	// their compare-and-set (the key changed while loading: by design).
	// L2WriteErrors failed, or were loaded values that the codec could
	// not encode (not counting a Set or Delete that failed because its
	// caller's context ended); L2WritesDropped were not attempted (queue
	// full, breaker open, too old, Close) or reached Redis past their
	// expiry by its clock (a value loaded with a TTL shorter than the
	// wait), and wrote nothing.
	L2Writes, L2WritesRejected, L2WriteErrors, L2WritesDropped uint64

	// L2TooLarge counts the calls not sent to Redis because a key or an
	// entry is longer than MaxBulkLen: Sets and Deletes refused with
	// ErrTooLarge (and a ByteTier's Gets), loaded values kept in L1 only,
	// and a Cache's reads of keys too long (its Get then loads, and keeps
	// the value in L1 only, without counting it again).
	L2TooLarge uint64

	// Loads counts calls to the Loader (lookups and background reloads
	// that missed both tiers), LoadErrors those that failed (not counting
	// not-found answers).
	Loads, LoadErrors uint64

	// Breaker is the circuit breaker's state; BreakerOpens counts how often
	// it opened. On a Redis Cluster or a goredis.Ring, where each node has
	// its own breaker, Breaker is the most severe of their states (open,
	// then half-open, then closed) and BreakerOpens their sum; the state
	// of a node's breaker that no call has reached for a minute (or twice
	// BreakerOpenFor, if longer) while not closed, such as a master's
	// replaced in a failover, is left out.
	Breaker      BreakerState
	BreakerOpens uint64

	// InvalidationsSent are invalidations this instance published;
	// InvalidationsReceived those of other instances applied to L1;
	// InvalidationsIgnored its own, received back; BadMessages malformed
	// messages ignored. InvalidationLag is the total delay between
	// sending and applying the received ones (by the wall clocks of
	// sender and receiver), InvalidationLagMax the longest.
	InvalidationsSent, InvalidationsReceived, InvalidationsIgnored, BadMessages uint64
	InvalidationLag, InvalidationLagMax                                         time.Duration

	// Subscribed tells whether the invalidation subscription is up now.
	// Subscriptions counts confirmed subscriptions, SubscriptionLosses the
	// times one broke, Flushes the times L1 was emptied for it.
	Subscribed                                 bool
	Subscriptions, SubscriptionLosses, Flushes uint64
}

// Stats returns the Cache's counters.
func (c *Cache[V]) Stats() Stats {
	st := c.stats()
	st.Local = c.l1.Stats()
	st.L1Hits = st.Local.Hits + st.Local.StaleHits
	return st
}

// stats returns the counters of Redis and of the invalidations.
func (c *core) stats() Stats {
	s := &c.st
	brk, opens := c.breakerState()
	return Stats{
		L2Hits:                s.l2Hits.Load(),
		L2Misses:              s.l2Misses.Load(),
		L2Incompatible:        s.l2Incompatible.Load(),
		L2Errors:              s.l2Errors.Load(),
		L2Skipped:             s.l2Skipped.Load(),
		L2Reads:               s.l2Reads.Load(),
		L2ReadTime:            time.Duration(s.l2ReadNanos.Load()),
		L2ReadMax:             time.Duration(s.l2ReadMax.Load()),
		L2Writes:              s.l2Writes.Load(),
		L2WritesRejected:      s.l2WritesRejected.Load(),
		L2WriteErrors:         s.l2WriteErrors.Load(),
		L2WritesDropped:       s.l2WritesDropped.Load(),
		L2TooLarge:            s.l2TooLarge.Load(),
		Loads:                 s.loads.Load(),
		LoadErrors:            s.loadErrors.Load(),
		Breaker:               brk,
		BreakerOpens:          opens,
		InvalidationsSent:     s.sent.Load(),
		InvalidationsReceived: s.received.Load(),
		InvalidationsIgnored:  s.ignored.Load(),
		BadMessages:           s.badMessages.Load(),
		InvalidationLag:       time.Duration(s.lagNanos.Load()),
		InvalidationLagMax:    time.Duration(s.lagMax.Load()),
		Subscribed:            c.subscribed.Load(),
		Subscriptions:         s.subscriptions.Load(),
		SubscriptionLosses:    s.losses.Load(),
		Flushes:               s.flushes.Load(),
	}
}
