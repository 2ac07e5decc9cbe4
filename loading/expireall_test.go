package loading

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A failed reload keeps the old value for stale-if-error; once its stale
// window (MaxStale from the ExpireAll) is over, Get returns the failure.
// A second ExpireAll forgets the failure, but must not bring the old value
// back as stale: callers already got the error in its place, so the next
// Get loads.
func TestSecondExpireAllDoesNotReviveFailedValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 2 {
				return "", boom
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: time.Minute, ErrorTTL: 10 * time.Minute})
		mustGet(t, c, 1, "v1.1")
		c.ExpireAll()
		time.Sleep(2 * time.Minute) // past the stale window
		for range 2 {
			if v, err := c.Get(context.Background(), 1); v != "" || !errors.Is(err, boom) || errors.Is(err, ErrStale) {
				t.Fatalf("Get past the stale window = %q, %v; want the failure", v, err)
			}
		}
		c.ExpireAll()
		v, err := c.Get(context.Background(), 1)
		if v != "v1.3" || err != nil {
			t.Fatalf("Get after a second ExpireAll = %q, %v; want a new load (v1.3), not the value whose stale window had ended", v, err)
		}
	})
}

// A value whose stale window after ExpireAll has ended is not served stale
// again by a later ExpireAll (nothing read it in between).
func TestSecondExpireAllDoesNotReviveValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: time.Minute})
		mustGet(t, c, 1, "v1.1")
		c.ExpireAll()
		time.Sleep(2 * time.Minute)
		c.ExpireAll()
		v, err := c.Get(context.Background(), 1)
		if v != "v1.2" || err != nil {
			t.Fatalf("Get after a second ExpireAll = %q, %v; want a new load (v1.2)", v, err)
		}
	})
}

// A second ExpireAll within a value's stale window does not lengthen it:
// the window stays MaxStale from the first ExpireAll after the value's
// load began.
func TestSecondExpireAllDoesNotLengthenStaleWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: time.Minute})
		mustGet(t, c, 1, "v1.1")
		mustGet(t, c, 2, "v2.1")
		c.ExpireAll()
		time.Sleep(30 * time.Second)
		c.ExpireAll()
		// Key 2 is still within the first window: stale.
		if v, err := c.Get(context.Background(), 2); v != "v2.1" || !errors.Is(err, ErrStale) {
			t.Fatalf("Get(2) within the stale window = %q, %v; want v2.1, stale", v, err)
		}
		time.Sleep(45 * time.Second) // 75s after the first ExpireAll
		v, err := c.Get(context.Background(), 1)
		if v != "v1.2" || err != nil {
			t.Fatalf("Get 75s after the first ExpireAll (MaxStale 1m) = %q, %v; want a new load (v1.2)", v, err)
		}
	})
}

// Values loaded between two ExpireAlls count their window from the second;
// many ExpireAlls within MaxStale keep each generation's window.
func TestExpireAllGenerations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: 10 * time.Minute})
		for k := range 5 {
			mustGet(t, c, k, fmt.Sprintf("v%d.1", k))
			c.ExpireAll() // key k's window: 10m from here
			time.Sleep(time.Minute)
		}
		time.Sleep(5 * time.Minute)
		// now: 10m after key 0's ExpireAll, 9m after key 1's, ...
		if v, err := c.Get(context.Background(), 0); v != "v0.2" || err != nil {
			t.Fatalf("Get(0) at the end of its window = %q, %v; want a load", v, err)
		}
		if v, err := c.Get(context.Background(), 1); v != "v1.1" || !errors.Is(err, ErrStale) {
			t.Fatalf("Get(1) within its window = %q, %v; want stale", v, err)
		}
	})
}
