package loading

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A caller that joined a GetMany's queued key (MaxManyLoads) after GetMany
// registered the key's load but before launchEach marked it deferred found
// nothing to start and waited for a turn: when the GetMany's first load
// needed that key through another load, nothing moved until LoadTimeout.
// GetMany now marks a queued flight before it registers it.
func TestQueuedKeyJoinedBeforeMarkStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			switch key {
			case 1: // the GetMany's first key, loaded in its turn: needs key 10
				v, err := c.Get(ctx, 10)
				return "1+" + v, err
			case 10: // an unrelated caller's load: needs key 2, queued by the GetMany
				v, err := c.Get(ctx, 2)
				return "10+" + v, err
			}
			return fmt.Sprint("v", key), nil
		})
		c = newCache(t, Options[int, string]{Loader: src, MaxManyLoads: 1, LoadTimeout: time.Minute})
		armed := true
		c.beforeFlight = func(k int) {
			// On the GetMany's goroutine, after it has registered the
			// loads of keys 1 and 2 and before it launches them: another
			// caller's load of key 10 (which reads key 2) runs meanwhile.
			if k == 3 && armed {
				armed = false
				go c.Get(context.Background(), 10)
				synctest.Wait()
			}
		}
		start := time.Now()
		m, err := c.GetMany(context.Background(), []int{1, 2, 3})
		d := time.Since(start)
		if err != nil || m[1] != "1+10+v2" || m[2] != "v2" || m[3] != "v3" || d != 0 {
			t.Fatalf("GetMany = %v, %v after %v of the bubble's time; want every key loaded at once (key 2's load started early by the caller that joined it, as when it joins after launchEach queued it)", m, err, d)
		}
	})
}
