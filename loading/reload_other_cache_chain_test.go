package loading

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// reloadMark marks the context that cache X's loader passes to cache Y, so
// that Y's loader can tell the background reload it starts.
type reloadMark struct{}

// A background reload starts a call chain of its own in every cache: a
// reload of cache Y started by cache X's loader waits for X's load of the
// key X is loading (which does not wait for the reload). launch reset only
// its own cache's chain and kept X's from the starter's context, so X
// answered the reload with a false ErrReentrant, which Y then remembered
// for ErrorTTL.
func TestReloadDropsOtherCachesChains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var x *Cache[int, string]
		gate := make(chan struct{})
		got := make(chan error, 1)
		// Y: orgs, reloaded ahead of expiry; its reload asks X (users)
		// for user 1.
		y := newCache(t, Options[int, string]{TTL: time.Hour, RefreshAfter: time.Minute, Loader: LoaderFunc[int, string](
			func(ctx context.Context, key int) (string, error) {
				if ctx.Value(reloadMark{}) != nil { // the background reload
					v, err := x.Get(ctx, 1)
					got <- err
					if err != nil {
						return "", err
					}
					return "org (owner " + v + ")", nil
				}
				return "org", nil
			})})
		// X: users; loading user 1 reads org 10 from Y (due: Y starts a
		// background reload and answers at once), then waits at the gate.
		x = newCache(t, Options[int, string]{TTL: time.Hour, Loader: LoaderFunc[int, string](
			func(ctx context.Context, key int) (string, error) {
				org, err := y.Get(context.WithValue(ctx, reloadMark{}, true), 10)
				if err != nil {
					return "", err
				}
				<-gate
				return "user of " + org, nil
			})})

		if _, err := y.Get(context.Background(), 10); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute) // Y's org 10 is due for its refresh ahead
		done := make(chan error, 1)
		go func() {
			_, err := x.Get(context.Background(), 1)
			done <- err
		}()
		synctest.Wait() // X's load waits at the gate; Y's reload asked X for user 1
		close(gate)
		if err := <-done; err != nil {
			t.Fatalf("X.Get(1): %v", err)
		}
		if err := <-got; err != nil {
			t.Fatalf("Y's background reload asked X for user 1 and got %v; want it to wait for X's load of user 1 (nothing waits for the reload: there is no cycle)", err)
		}
	})
}
