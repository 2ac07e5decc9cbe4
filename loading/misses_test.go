package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// Misses counts lookups that went on to wait for a load: a lookup that
// fails at once, with ErrReentrant or because its context has already
// ended, waits for none and is not a miss (nor a hit of any kind).
func TestMissesCountOnlyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		c = newCache(t, Options[int, string]{Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
			switch key {
			case 10: // GetMany of its own key (ErrReentrant) and another
				m, err := c.GetMany(ctx, []int{10, 11})
				var be *BulkError[int]
				if !errors.As(err, &be) || !errors.Is(be.Errors[10], ErrReentrant) || m[11] != "v" {
					t.Errorf("loader's GetMany = %v, %v; want key 10 ErrReentrant, key 11 loaded", m, err)
				}
			case 20: // Get of its own key
				if _, err := c.Get(ctx, 20); !errors.Is(err, ErrReentrant) {
					t.Errorf("loader's Get(20) = %v; want ErrReentrant", err)
				}
			}
			return "v", nil
		})})
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.GetMany(done, []int{1, 2}); !errors.Is(err, context.Canceled) {
			t.Fatalf("GetMany with an ended context = %v", err)
		}
		if _, err := c.Get(done, 3); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get with an ended context = %v", err)
		}
		if s := c.Stats(); s.Misses != 0 || s.Loads != 0 {
			t.Fatalf("after lookups with an ended context: %+v; want no miss, no load", s)
		}
		mustGet(t, c, 10, "v") // misses: 10, 11
		mustGet(t, c, 20, "v") // misses: 20
		if s := c.Stats(); s.Misses != 3 || s.Hits != 0 || s.Loads != 3 {
			t.Fatalf("stats %+v; want 3 misses (keys 10, 11, 20; not the ErrReentrant lookups), 3 loads", s)
		}
	})
}
