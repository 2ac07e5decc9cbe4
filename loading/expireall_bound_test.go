package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// An ExpireAll forgets the calls whose stale window has ended.
func TestExpireAllForgetsEndedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCache(t, Options[int, string]{Loader: newSource(nil), MaxStale: time.Minute})
		c.ExpireAll()
		c.ExpireAll()
		if n := len(c.epoch.Load().ats); n != 2 {
			t.Fatalf("epoch remembers %d calls; want 2", n)
		}
		time.Sleep(time.Minute)
		c.ExpireAll()
		if n := len(c.epoch.Load().ats); n != 1 {
			t.Fatalf("epoch remembers %d calls; want 1 (the windows of the others have ended)", n)
		}
	})
}

// ExpireAll remembers its last maxExpireAlls calls within MaxStale: a value
// loaded before the oldest of them is past its stale window (its window
// is cut short, never lengthened).
func TestExpireAllRemembersBoundedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, calls := range []int{maxExpireAlls, maxExpireAlls + 1} {
			src := newSource(nil)
			c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: time.Minute})
			mustGet(t, c, 1, "v1.1")
			for range calls {
				c.ExpireAll()
			}
			v, err := c.Get(context.Background(), 1)
			switch {
			case calls == maxExpireAlls && (v != "v1.1" || !errors.Is(err, ErrStale)):
				t.Fatalf("after %d ExpireAlls: Get = %q, %v; want v1.1, stale", calls, v, err)
			case calls > maxExpireAlls && (v != "v1.2" || err != nil):
				t.Fatalf("after %d ExpireAlls: Get = %q, %v; want a new load (v1.2)", calls, v, err)
			}
			if n := len(c.epoch.Load().ats); n > maxExpireAlls {
				t.Fatalf("epoch remembers %d calls; want at most %d", n, maxExpireAlls)
			}
		}
	})
}
