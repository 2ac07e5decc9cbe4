package loading

import (
	"context"
	"sync/atomic"
	"time"
)

// LimitTTL, called by a Loader or BulkLoader with the context of its call,
// bounds the lifetime of the values that this call returns: each value is
// fresh for at most d (its TTL becomes min(TTL, d), after jitter), and is
// due for a background reload no later than that. MaxStale still applies
// after the shortened TTL. It is for sources that know how long their
// answer stays valid: the remaining TTL of a second cache tier, an HTTP
// max-age. A d of zero or less makes the values stale at once (so they are
// served only within MaxStale). With several calls the shortest d wins.
// LimitTTL does nothing when ctx is not a loader call's context (or is
// nil), and it affects neither remembered errors nor not-found answers.
func LimitTTL(ctx context.Context, d time.Duration) {
	if ctx == nil {
		return
	}
	l, _ := ctx.Value(ttlLimitKey{}).(*ttlLimit)
	if l == nil {
		return
	}
	enc := int64(max(d, 0)) + 1
	if enc <= 0 {
		return // d is the largest Duration: no bound
	}
	for {
		cur := l.enc.Load()
		if cur != 0 && cur <= enc {
			return
		}
		if l.enc.CompareAndSwap(cur, enc) {
			return
		}
	}
}

// TTLLimit returns the bound that LimitTTL has set so far on ctx, a loader
// call's context, and whether one is set (false for any other context).
// It is for layers between the cache and a source that store the loaded
// values elsewhere too (the redis package writes them to Redis) and must
// keep the source's bound there.
func TTLLimit(ctx context.Context) (d time.Duration, ok bool) {
	if ctx == nil {
		return 0, false
	}
	l, _ := ctx.Value(ttlLimitKey{}).(*ttlLimit)
	if l == nil {
		return 0, false
	}
	return l.get()
}

// ttlLimit is the bound that LimitTTL sets for one loader call.
type ttlLimit struct {
	enc atomic.Int64 // the bound in nanoseconds plus one; 0: no bound
}

type ttlLimitKey struct{}

// get returns the bound, and whether there is one.
func (l *ttlLimit) get() (time.Duration, bool) {
	enc := l.enc.Load()
	return time.Duration(enc - 1), enc != 0
}

// limitRecord shortens the lifetimes of r, a value record loaded at now, to
// the bound d set by LimitTTL.
func (c *Cache[K, V]) limitRecord(r *record[V], now int64, d time.Duration) {
	end := satAdd(now, d)
	if end >= r.freshUntil {
		return
	}
	r.freshUntil = end
	r.staleUntil = satAdd(end, c.maxStale)
	r.nextLoad = min(r.nextLoad, end)
}
