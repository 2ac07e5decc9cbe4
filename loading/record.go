package loading

import (
	"math"
	"sync/atomic"
	"time"
)

// never is the time of a lifetime that does not end.
const never = math.MaxInt64

// record is what the underlying cachekit.Cache stores for a key: a value, a
// remembered error, or both (a value kept for stale-if-error after a failed
// reload). Times are nanoseconds on the cache's clock (Cache.now). A record
// is immutable once stored, except for refreshing.
type record[V any] struct {
	value    V
	hasValue bool
	gen      uint64 // epoch generation when the value's load began
	loadedAt int64
	// freshUntil is the end of the value's TTL; staleUntil that plus
	// MaxStale. never when the TTL is zero.
	freshUntil, staleUntil int64

	// err is the remembered failure (or not-found answer) of the last
	// load attempt; nil after a successful one. staleErr is the error
	// that comes with the value while it is stale: ErrStale, or ErrStale
	// wrapped with err.
	err, staleErr error
	loadGen       uint64 // epoch generation when the last attempt began
	retryAt       int64  // with err: no load before this (ErrorTTL, NotFoundTTL)

	// nextLoad is when a background reload becomes due: the refresh-ahead
	// age, the end of the TTL, or retryAt after a failed reload.
	nextLoad int64

	// refreshing is set by the reader that claims the right to start a
	// background reload of this record, and cleared when that reload
	// could not start or ended without replacing the record.
	refreshing atomic.Bool
}

// hardEnd is when the record is of no use any more: its value can no longer
// be served, even stale, and its error no longer answers.
func (r *record[V]) hardEnd() int64 {
	end := int64(0)
	if r.hasValue {
		end = r.staleUntil
	}
	if r.err != nil {
		end = max(end, r.retryAt)
	}
	return end
}

// epoch counts ExpireAll calls: a value whose load began in generation g
// is stale from the time of the call that began generation g+1 (the first
// ExpireAll after its load began), however many calls followed.
type epoch struct {
	gen uint64
	// ats holds the times of the latest calls, oldest first: the last one
	// began gen, the one before it gen-1, and so on. A call is dropped
	// once MaxStale has passed since it (the values it made stale are
	// past their window), or when more than maxExpireAlls follow it.
	// Epochs share the backing array: a new epoch only appends past the
	// end of the one before it, where no reader of an older epoch looks.
	ats []int64
}

// maxExpireAlls bounds the calls an epoch remembers: a value whose load
// began before all of them is past its stale window.
const maxExpireAlls = 1024

// staleSince returns when values whose load began in generation g (before
// ep.gen) became stale, or false if their stale window has ended.
func (ep *epoch) staleSince(g uint64) (int64, bool) {
	back := ep.gen - g // >= 1: ats[len-1] began gen, ats[len-back] g+1
	if back > uint64(len(ep.ats)) {
		return 0, false
	}
	return ep.ats[len(ep.ats)-int(back)], true
}

// next returns the epoch begun by an ExpireAll at now.
func (ep *epoch) next(now int64, maxStale time.Duration) *epoch {
	ats := ep.ats
	for len(ats) > 0 && (satAdd(ats[0], maxStale) <= now || len(ats) >= maxExpireAlls) {
		ats = ats[1:]
	}
	return &epoch{gen: ep.gen + 1, ats: append(ats, now)}
}

// state is what a record can answer at a given time.
type state uint8

const (
	unusable state = iota // nothing: load
	fresh                 // the value
	stale                 // the value, with staleErr
	negative              // the remembered error
)

// view tells what r answers at now under epoch ep, and whether a background
// reload is due (only ever for fresh and stale).
func (c *Cache[K, V]) view(r *record[V], now int64, ep *epoch) (state, bool) {
	if r.hasValue {
		until, ok := r.freshUntil, true
		if r.gen < ep.gen {
			var at int64
			at, ok = ep.staleSince(r.gen)
			until = min(until, at)
		}
		switch {
		case !ok: // past the stale window of an earlier ExpireAll
		case now < until:
			return fresh, now >= r.nextLoad
		case now < satAdd(until, c.maxStale):
			return stale, now >= r.nextLoad || r.loadGen < ep.gen
		}
	}
	if r.err != nil && now < r.retryAt && r.loadGen >= ep.gen {
		return negative, false
	}
	return unusable, false
}

// satAdd returns t+d, saturating at never.
func satAdd(t int64, d time.Duration) int64 {
	// t is negative when a Clock reads earlier than the cache's start:
	// never-t would overflow there, and t+d cannot.
	if t == never || (t >= 0 && int64(d) >= never-t) {
		return never
	}
	return t + int64(d)
}
