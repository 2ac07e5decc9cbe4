package redis

import (
	"context"
	"sync/atomic"
	"time"
)

// callContext returns the context of one Redis call started at now: ctx,
// ending no later than Timeout from now, and a function to call when the
// call is over.
//
// context.WithTimeout for every call costs five allocations and a runtime
// timer started and stopped: 7% of the client's CPU in a cold read of a
// Cache (L1 miss, Redis hit) when it was measured (issue #7). So:
//
//   - when ctx ends by then anyway (its deadline comes first), it is the
//     call's context as it is;
//   - when ctx can never be cancelled (context.Background, or values on
//     top of it, as in background jobs), the call gets the deadline of a
//     context shared by the calls started within the same millisecond
//     (deadlines), with ctx's values: at most a millisecond (and at most a
//     sixteenth of Timeout) later than Timeout from now, never earlier;
//   - otherwise (a cancellable ctx with a later deadline or none) it is
//     context.WithDeadline, as the call must end at whichever comes first.
func (c *core) callContext(ctx context.Context, now time.Time) (context.Context, context.CancelFunc) {
	end := now.Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && !d.After(end) {
		return ctx, noCancel
	}
	if ctx.Done() == nil {
		shared := c.deadlines.get(now, end)
		if ctx == context.Background() || ctx == context.TODO() {
			return shared, noCancel
		}
		return &boundContext{Context: shared, values: ctx}, noCancel
	}
	return context.WithDeadline(ctx, end)
}

func noCancel() {}

// deadlines hands out contexts that end at a given deadline or up to slack
// later, each shared by the calls whose deadlines fall in its window, so
// that a busy Cache starts one timer per window instead of one per call.
type deadlines struct {
	slack time.Duration
	cur   atomic.Pointer[sharedDeadline]
}

// sharedDeadline is a context that ends at its deadline (it is never
// cancelled otherwise; its timer releases it then).
type sharedDeadline struct {
	ctx      context.Context
	cancel   context.CancelFunc // kept for vet; the deadline's timer cancels it
	deadline time.Time
}

// newDeadlines returns the deadlines of calls bounded by timeout: shared
// over windows of a millisecond, or of timeout/16 when that is shorter.
func newDeadlines(timeout time.Duration) *deadlines {
	return &deadlines{slack: min(time.Millisecond, timeout/16)}
}

// get returns a context that ends no earlier than end and no later than
// end plus the slack; now is the current time.
func (d *deadlines) get(now, end time.Time) context.Context {
	if s := d.cur.Load(); s != nil && !s.deadline.Before(end) && s.deadline.Sub(end) <= d.slack {
		return s.ctx
	}
	s := &sharedDeadline{deadline: end.Add(d.slack)}
	s.ctx, s.cancel = context.WithDeadline(context.Background(), s.deadline)
	d.cur.Store(s)
	return s.ctx
}

// boundContext is a shared deadline's context (its Deadline, Done, Err)
// carrying the values of the caller's context.
type boundContext struct {
	context.Context // the shared deadline's
	values          context.Context
}

// Value returns the caller's value for key; the shared context answers
// only the context package's own key (so that contexts derived from this
// one, and context.Cause, find its cancellation).
func (b *boundContext) Value(key any) any {
	if v := b.Context.Value(key); v != nil {
		return v
	}
	return b.values.Value(key)
}
