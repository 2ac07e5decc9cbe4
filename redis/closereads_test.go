package redis

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A read that comes to reads after Close fails with ErrClosed and sends
// nothing, also when it would go alone rather than queue: with coalescing
// off (ReadsInFlight negative), or with a caller's deadline shorter than
// Timeout (an HTTP request's, say). Those reads skipped the check, so a Get
// that passed Close's other checks just before it could still send a GET
// after Close had returned, against a client the caller may have closed.
func TestDirectReadsAfterClose(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight int
		deadline time.Duration // of the caller's context; 0: none
	}{
		{"coalescing off", -1, 0},
		{"caller deadline under Timeout", 0, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, cnt := backend{addrs: []string{standalone(t).Addr()}}.client(t)
			c := newTier(t, cl, newSource(), func(o *Options[string]) { o.ReadsInFlight = tc.inFlight })
			c.Close()
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			sent := cnt.n.Load()
			res := c.reads.get(ctx, ctx, c.prefix+"k", time.Now())
			if !errors.Is(res.err, ErrClosed) {
				t.Errorf("a read after Close: %v; want ErrClosed", res.err)
			}
			if n := cnt.n.Load() - sent; n != 0 {
				t.Errorf("%d Redis commands sent after Close returned; want 0", n)
			}
		})
	}
}
