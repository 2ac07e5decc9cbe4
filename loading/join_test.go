package loading

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A Get or GetMany whose context has already ended starts no background
// reload of a due key either (the package doc: "A caller whose context has
// already ended starts no load").
func TestDoneCtxStartsNoRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src, TTL: 10 * time.Minute, RefreshAfter: time.Minute})
		mustGet(t, c, 1, "v1.1")
		mustGet(t, c, 2, "v2.1")
		time.Sleep(2 * time.Minute) // due for refresh ahead
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if v, err := c.Get(ctx, 1); v != "v1.1" || err != nil {
			t.Fatalf("Get = %q, %v", v, err)
		}
		if _, err := c.GetMany(ctx, []int{2}); err != nil {
			t.Fatalf("GetMany: %v", err)
		}
		synctest.Wait()
		if n := src.total.Load(); n != 2 {
			t.Fatalf("%d loader calls; a caller whose context had ended started %d background reloads", n, n-2)
		}
	})
}

// A Get that starts after ExpireAll returned does not join a load begun
// before it: that load may have read the source before the change, and its
// result is stored as stale, so handing it to the Get with a nil error (as
// fresh) would contradict the cache.
func TestGetAfterExpireAllStartsNewLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				<-gate // the load read the source before ExpireAll
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src})
		go c.Get(context.Background(), 1)
		synctest.Wait() // load 1 in flight
		c.ExpireAll()   // the source changed: no value loaded before is fresh
		got := make(chan string, 1)
		errc := make(chan error, 1)
		go func() {
			v, err := c.Get(context.Background(), 1)
			got <- v
			errc <- err
		}()
		synctest.Wait()
		close(gate)
		v, err := <-got, <-errc
		if err == nil && v == "v1.1" {
			t.Fatalf("a Get begun after ExpireAll returned %q, nil: a value loaded before the ExpireAll, as fresh", v)
		}
	})
}

// After a Prober's miss, Get waits for the load on the context the
// Prober returned (next) instead of the caller's own. A Prober that bounds
// its own lookup (context.WithTimeout + defer cancel) and returns a context
// derived from that — "derived from ctx", as the Prober doc asks — makes
// the caller fail at once with context.Canceled although its own context
// is fine; a Prober returning a context without the caller's cancellation
// (context.WithoutCancel) makes the caller wait past its own deadline.
func TestProbeContextNotWaitedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-gate
			return "loaded", nil
		})
		c := newCache(t, Options[int, string]{Loader: src, Probe: probeFunc(
			func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
				pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				// ... look key up in a second tier with pctx: a miss.
				return context.WithValue(pctx, probeKey{}, "hint"), "", 0, false
			})})
		got := make(chan error, 1)
		go func() {
			_, err := c.Get(context.Background(), 1)
			got <- err
		}()
		synctest.Wait()
		close(gate)
		if err := <-got; err != nil {
			t.Fatalf("Get with a live context = %v; want the loaded value", err)
		}
	})
}

// A Get whose context has ended, after ExpireAll, starts no load and does
// not overtake the one in flight either (doc.go: "A load that was in
// flight during ExpireAll stores its result as already stale"): that
// load's result is stored, and the next caller is served it, stale, at
// once.
func TestDoneCtxAfterExpireAllKeepsStaleResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				<-gate
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: time.Hour})
		go c.Get(context.Background(), 1)
		synctest.Wait() // load 1 in flight
		c.ExpireAll()
		done, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Get(done, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get(done ctx) = %v", err)
		}
		close(gate)
		synctest.Wait() // load 1 finished
		if n := src.count(1); n != 1 {
			t.Fatalf("%d loader calls before the check", n)
		}
		v, err := c.Get(context.Background(), 1)
		if !errors.Is(err, ErrStale) || v != "v1.1" {
			t.Fatalf("Get after the in-flight load finished = %q, %v; want v1.1 stored as stale (ErrStale); a caller with an ended context discarded the load's result", v, err)
		}
	})
}
