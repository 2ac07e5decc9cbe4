package redis

import (
	"context"
	"testing"
	"time"
)

// A write whose caller gave up at its deadline (Redis hung: its bytes sat
// in the server's socket) was run by Redis when it resumed, and overwrote
// whatever had been written since: a later Set of the same instance, sent
// as soon as the first had failed, or another instance's. The writes are
// now scripts that do nothing once the server's clock is past the call's
// deadline (by the estimate of the clocks' offset that earlier writes
// gave).
func TestHungRedisRunsNoLateWrite(t *testing.T) {
	for _, kind := range []string{"ByteTier.Set", "ByteTier.Delete", "Cache.Set", "Cache.Delete"} {
		t.Run(kind, func(t *testing.T) {
			checkLeaks(t)
			ctx := context.Background()
			srv := private(t)
			admin := srv.Client()
			t.Cleanup(func() { _ = admin.Close() })
			cl := hungClient(t, srv)
			const timeout = 100 * time.Millisecond
			var write func() error
			var prefix string
			switch kind {
			case "ByteTier.Set", "ByteTier.Delete":
				bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = timeout })
				prefix = bt.prefix
				// The write before: the script known to the server, and
				// the estimate of its clock.
				if err := bt.Set(ctx, []byte("k"), []byte("before"), time.Hour); err != nil {
					t.Fatal(err)
				}
				write = func() error { return bt.Set(ctx, []byte("k"), []byte("late"), time.Hour) }
				if kind == "ByteTier.Delete" {
					// Its script known to the server too (each script is
					// sent whole until it has run once).
					if _, err := bt.Delete(ctx, []byte("other")); err != nil {
						t.Fatal(err)
					}
					write = func() error { _, err := bt.Delete(ctx, []byte("k")); return err }
				}
			default:
				c := newTier(t, cl, newSource(), func(o *Options[string]) { o.Timeout = timeout; o.TTL = time.Hour })
				prefix = c.prefix
				if err := c.Set(ctx, "k", "before"); err != nil {
					t.Fatal(err)
				}
				write = func() error { return c.Set(ctx, "k", "late") }
				if kind == "Cache.Delete" {
					write = func() error { return c.Delete(ctx, "k") }
				}
			}
			before, _ := rawGet(t, admin, prefix+"k")
			writeHeldByHungServer(t, srv, admin, write)
			if raw, _ := rawGet(t, admin, prefix+"k"); raw != before {
				t.Errorf("Redis holds %q after a write that reached it past its deadline; want %q, as before it", raw, before)
			}
		})
	}
}
