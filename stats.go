package cachekit

import (
	"runtime"
	"sync/atomic"
)

// Indexes of the striped counters.
const (
	statMisses = iota
	statSets
	statDeleted
	statReplaced
	statExpired // removed by a caller's operation after expiring
	// In-place Sets (a Set and a replacement each) that were queued in the
	// read buffer, which counts them with the hits, and that were not.
	statInPlaceQueued
	statInPlace
	numStats
)

// statStripe is one stripe of the cache's counters, padded to its own
// cache line(s) so that goroutines counting on different stripes do not
// contend.
type statStripe struct {
	v [numStats]atomic.Uint64
	_ [64 - (numStats*8)%64]byte
}

func statStripes(procs int) int {
	n := 1
	for n < 4*procs {
		n <<= 1
	}
	return n
}

// count adds one to a counter, on the stripe of the goroutine id (probe).
// Unlike the read path it does not look for contention: the goroutines
// that afterRead spreads over the read buffer's stripes are spread over
// these as well.
func (c *cache[K, V]) count(stat int, id uint64) {
	c.stats[c.stripe(id)&uint64(len(c.stats)-1)].v[stat].Add(1)
}

func (c *cache[K, V]) sum(stat int) uint64 {
	var n uint64
	for i := range c.stats {
		n += c.stats[i].v[stat].Load()
	}
	return n
}

// Stats is a snapshot of a cache's counters since it was created.
type Stats struct {
	Hits   uint64 // Get found a live entry (0 with Options.DisableStats)
	Misses uint64 // Get found nothing, or an expired entry (likewise)
	Sets   uint64 // entries stored by Set, SetWithTTL and SetMany

	Evicted  uint64 // removed by the policy to respect the bound
	Expired  uint64 // removed after their TTL passed
	Deleted  uint64 // removed by Delete
	Replaced uint64 // replaced by a Set of the same key
	Cleared  uint64 // removed by Clear

	Entries int    // entries in the cache now (as Len)
	Weight  uint64 // their total weight (their number, for a cache without Weigher)
}

// HitRatio returns Hits / (Hits + Misses), or 0 before any lookup.
func (s Stats) HitRatio() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// awaitWrites runs maintenance until every write record whose slot was
// claimed before the call is applied. A record can be claimed and not yet
// written (its writer preempted between the two, which nothing else
// separates): the queue pops nothing past it, so the records of writes
// that returned after it would wait for the next pass.
func (c *cache[K, V]) awaitWrites() {
	end := c.writes.Pushed()
	for {
		c.maintain(true)
		if c.writes.Popped() >= end {
			return
		}
		runtime.Gosched()
	}
}

// Stats returns the cache's counters. It first applies pending writes to the
// policy, so Entries and Weight reflect every write that returned before
// Stats was called, with one exception: a write of a key whose earlier
// write replaced a value while the write queue was full, and is still in
// its OnEvict call for it, waits for that call before the policy applies
// it (that write's record is queued after its report; see
// Options.OnEvict), and Weight, and the bound, count the replaced value
// meanwhile. The counters are read one at a time, not atomically together.
func (h *Cache[K, V]) Stats() Stats {
	c := h.c
	c.awaitWrites()
	// Hits are the reads queued in the read buffer, less the in-place Sets
	// queued there, plus the hits counted aside. Each in-place Set is
	// counted after it is queued, so reading its count first can only
	// over-count for a moment, never wrap below zero.
	queuedSets := c.sum(statInPlaceQueued)
	inPlace := queuedSets + c.sum(statInPlace)
	s := Stats{
		Hits:     c.reads.Added() - queuedSets + c.reads.Count(),
		Misses:   c.sum(statMisses),
		Sets:     c.sum(statSets) + inPlace,
		Expired:  c.sum(statExpired),
		Deleted:  c.sum(statDeleted),
		Replaced: c.sum(statReplaced) + inPlace,
		Entries:  h.Len(),
	}
	if !c.countReads {
		s.Hits, s.Misses = 0, 0
	}
	s.Evicted = c.evictions[CauseCapacity].Load()
	s.Expired += c.evictions[CauseExpired].Load()
	s.Cleared = c.evictions[CauseCleared].Load()
	c.mu.Lock()
	if c.bounded {
		s.Weight = c.policy.Weight()
	} else {
		s.Weight = uint64(s.Entries)
	}
	c.mu.Unlock()
	return s
}
