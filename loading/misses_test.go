package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
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

// Stats: a lookup that fails at once because its context has already
// ended counts in none of Hits, StaleHits, ErrorHits and Misses (stats.go),
// also when a load of the key is in flight (the Get joins it, and returns
// ctx.Err() at once).
func TestEndedContextJoinIsNoMiss(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(map[bool]string{false: "Get", true: "GetMany"}[many], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gate := make(chan struct{})
				src := newSource(func(ctx context.Context, key, n int) (string, error) {
					<-gate
					return "v", nil
				})
				c := newCache(t, Options[int, string]{Loader: src, TTL: time.Minute})
				go c.Get(context.Background(), 1)
				synctest.Wait() // the load is in flight, at the gate
				done, cancel := context.WithCancel(context.Background())
				cancel()
				var err error
				if many {
					_, err = c.GetMany(done, []int{1})
				} else {
					_, err = c.Get(done, 1)
				}
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("lookup with an ended context = %v; want context.Canceled", err)
				}
				s := c.Stats()
				close(gate)
				synctest.Wait()
				if s.Misses != 1 || s.Shared != 0 {
					t.Fatalf("stats %+v; want 1 miss (the load's starter), 0 shared: the lookup with an ended context failed at once", s)
				}
			})
		})
	}
}
