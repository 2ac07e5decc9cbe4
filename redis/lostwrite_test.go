package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// failingWrites is a go-redis hook that fails every pipeline holding a
// SET (a Set's or Delete's write: Redis is down for writes), after
// running during (if set) while the write is "on its way".
type failingWrites struct{ during func() }

func (h *failingWrites) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *failingWrites) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *failingWrites) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if cmdName(c) == "set" {
				if h.during != nil {
					h.during()
				}
				err := errors.New("injected: connection reset")
				for _, c := range cmds {
					c.SetErr(err)
				}
				return err
			}
		}
		return next(ctx, cmds)
	}
}

// When Set's Redis write fails, L1 keeps the new value (Set's contract:
// "If Redis fails, L1 holds the new value but the error is returned"),
// alone or even if, meanwhile, a Get of an unrelated key that shares the
// key's write stripe missed L1 and read Redis.
func TestFailedSetKeepsLocalValue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, unrelatedRead := range []bool{false, true} {
			t.Run(fmt.Sprint("unrelated read ", unrelatedRead), func(t *testing.T) {
				checkLeaks(t)
				cl, _ := b.client(t)
				src := newSource()
				src.set("k", "old")
				c := newTier(t, cl, src, nil)
				waitSubscribed(t, c)
				ctx := context.Background()
				h := &failingWrites{}
				if unrelatedRead {
					other := ""
					for i := 0; other == ""; i++ {
						if o := fmt.Sprint("other", i); c.stripe(o) == c.stripe("k") {
							other = o
						}
					}
					src.set(other, "x")
					h.during = func() {
						// Another caller misses L1 on an unrelated key while
						// the write is on its way.
						if v, err := c.Get(ctx, other); err != nil || v != "x" {
							t.Errorf("Get(%q) = %q, %v", other, v, err)
						}
					}
				}
				cl.AddHook(h)
				if err := c.Set(ctx, "k", "new"); err == nil {
					t.Fatal("Set succeeded; want the injected write error")
				}
				if v, err := c.Get(ctx, "k"); err != nil || v != "new" {
					t.Fatalf("Get after a Set whose Redis write failed = %q, %v; want %q from L1 (Loads %d)", v, err, "new", c.Stats().Loads)
				}
			})
		}
	})
}
