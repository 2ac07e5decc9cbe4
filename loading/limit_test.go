package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A loader that calls LimitTTL shortens its value's TTL (and the refresh
// and stale windows that follow from it); the next load without it gets
// the full TTL again.
func TestLimitTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limit := map[int]time.Duration{1: 2 * time.Second, 2: time.Hour, 3: -time.Second}
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				LimitTTL(ctx, limit[key])
				LimitTTL(ctx, limit[key]+time.Minute) // the shortest wins
			}
			return "v", nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: 10 * time.Second, MaxStale: time.Second})
		for k := 1; k <= 3; k++ {
			mustGet(t, c, k, "v")
		}
		// Key 3's value was stale at once: served stale, reloaded.
		if _, err := c.Get(context.Background(), 3); !errors.Is(err, ErrStale) {
			t.Fatalf("key 3 right after a load limited to <= 0: err %v, want ErrStale", err)
		}
		time.Sleep(2500 * time.Millisecond)
		synctest.Wait()
		// Key 1 is past its limited TTL, within MaxStale: stale.
		if _, err := c.Get(context.Background(), 1); !errors.Is(err, ErrStale) {
			t.Fatalf("key 1 after 2.5s with a 2s limit: err %v, want ErrStale", err)
		}
		mustGet(t, c, 2, "v") // limit above TTL: no effect yet
		synctest.Wait()
		if n := src.count(1); n != 2 {
			t.Fatalf("key 1 loaded %d times, want 2 (a background reload)", n)
		}
		mustGet(t, c, 1, "v") // the reload had no limit: fresh for the TTL
		time.Sleep(8 * time.Second)
		mustGet(t, c, 1, "v")
		if n := src.count(2); n != 1 {
			t.Fatalf("key 2 loaded %d times, want 1", n)
		}
	})
}

// LimitTTL outside a loader call does nothing (and does not panic).
func TestLimitTTLOutsideLoader(t *testing.T) {
	LimitTTL(context.Background(), time.Second)
}
