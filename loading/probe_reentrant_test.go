package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A Prober that asks the cache for the key it is probing (directly, or
// through a Get of another key whose load asks for it) gets ErrReentrant
// at once, as a loader does, instead of waiting for its own load until its
// context ends, with every other caller of the key waiting behind it.
func TestProbeReentrant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		var inner error
		c = newCache(t, Options[int, string]{
			Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
				if key == 2 {
					// Key 2 is loaded for key 1's probe: asking for key 1
					// waits for the probe that waits for this load.
					if _, err := c.Get(ctx, 1); !errors.Is(err, ErrReentrant) {
						return "", errors.New("key 2's loader: want ErrReentrant for key 1")
					}
				}
				return "loaded", nil
			}),
			Probe: probeFunc(func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
				if key == 1 {
					ctx, cancel := context.WithTimeout(ctx, time.Hour)
					defer cancel()
					_, inner = c.Get(ctx, 1)
					if v, err := c.Get(ctx, 2); err != nil || v != "loaded" {
						t.Errorf("probe's Get(2) = %q, %v", v, err)
					}
				}
				return nil, "", 0, false
			}),
		})
		start := time.Now()
		mustGet(t, c, 1, "loaded")
		if !errors.Is(inner, ErrReentrant) {
			t.Errorf("probe asking for its own key: err %v, want ErrReentrant", inner)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Get took %v waiting for itself", d)
		}
	})
}
