package loading

import (
	"bytes"
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// stackHookClock is a fake clock that runs a hook, once, from the first read
// whose stack names a given function.
type stackHookClock struct {
	now   atomic.Int64
	at    atomic.Pointer[string]
	hook  func()
	fired atomic.Bool
}

func (h *stackHookClock) Now() time.Time {
	if at := h.at.Load(); at != nil {
		buf := make([]byte, 64<<10)
		if bytes.Contains(buf[:runtime.Stack(buf, false)], []byte(*at)) && h.at.CompareAndSwap(at, nil) {
			h.hook()
			h.fired.Store(true)
		}
	}
	return time.Unix(0, h.now.Load())
}

func (h *stackHookClock) arm(in string, hook func()) {
	h.hook = hook
	h.at.Store(&in)
}

// A background reload that Close refuses after it was registered (between
// refreshFlight and launch) runs no load, and must not count in
// Stats.Refreshes: it was counted before launch found the cache closed.
func TestRefreshRefusedByCloseNotCounted(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(map[bool]string{false: "Get", true: "GetManyBulk"}[many], func(t *testing.T) {
			clock := &stackHookClock{}
			var loads atomic.Int64
			opts := Options[int, string]{Clock: clock, TTL: time.Minute, RefreshAfter: 30 * time.Second,
				Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
					loads.Add(1)
					return "v", nil
				})}
			if many {
				opts.BulkLoader = BulkLoaderFunc[int, string](func(ctx context.Context, keys []int) (map[int]string, error) {
					m := map[int]string{}
					for _, k := range keys {
						loads.Add(1)
						m[k] = "v"
					}
					return m, nil
				})
			}
			c := Must(opts)
			ctx := context.Background()
			if _, err := c.GetMany(ctx, []int{1, 2}); err != nil {
				t.Fatal(err)
			}
			clock.now.Add(int64(31 * time.Second)) // both due for a reload
			clock.arm("refreshFlight", c.Close)
			if many {
				got, err := c.GetMany(ctx, []int{1, 2})
				if err != nil || len(got) != 2 {
					t.Fatalf("GetMany = %v, %v; want both values, served while due", got, err)
				}
			} else if v, err := c.Get(ctx, 1); err != nil || v != "v" {
				t.Fatalf("Get = %q, %v; want v, served while due", v, err)
			}
			if !clock.fired.Load() {
				t.Fatal("no reload was registered (the hook that closes the cache did not run)")
			}
			if n := loads.Load(); n != 2 {
				t.Fatalf("%d loads ran, want 2 (the first GetMany's; no reload after Close)", n)
			}
			if s := c.Stats(); s.Refreshes != 0 {
				t.Fatalf("Stats.Refreshes = %d after reloads refused by Close; want 0", s.Refreshes)
			}
		})
	}
}
