package loading

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachekit/cachekit"
)

// A GetMany without a BulkLoader has at most MaxManyLoads Load calls in
// flight at once; its other keys are loaded as those finish, and every key
// gets its value.
func TestGetManyBoundsLoads(t *testing.T) {
	for _, limit := range []int{0, 1, 5} {
		t.Run(fmt.Sprint("MaxManyLoads=", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				want := cmp.Or(limit, DefaultMaxManyLoads)
				var inFlight, most atomic.Int64
				gate := make(chan struct{})
				src := newSource(func(ctx context.Context, key, n int) (string, error) {
					now := inFlight.Add(1)
					for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
					}
					<-gate
					inFlight.Add(-1)
					return fmt.Sprint("v", key), nil
				})
				c := newCache(t, Options[int, string]{Loader: src, MaxManyLoads: limit})
				keys := make([]int, 100)
				for i := range keys {
					keys[i] = i
				}
				type result struct {
					m   map[int]string
					err error
				}
				done := make(chan result, 1)
				go func() {
					m, err := c.GetMany(context.Background(), keys)
					done <- result{m, err}
				}()
				synctest.Wait()
				first := inFlight.Load()
				close(gate)
				r := <-done
				if first != int64(want) {
					t.Fatalf("%d loads in flight at first, want %d", first, want)
				}
				if r.err != nil || len(r.m) != len(keys) {
					t.Fatalf("GetMany: %d values, %v", len(r.m), r.err)
				}
				for _, k := range keys {
					if r.m[k] != fmt.Sprint("v", k) {
						t.Fatalf("key %d: %q", k, r.m[k])
					}
				}
				if m := most.Load(); m != int64(want) {
					t.Fatalf("at most %d loads in flight, want %d", m, want)
				}
			})
		})
	}
}

// A loader of one of GetMany's keys that reads another key of the same
// GetMany, still waiting for its turn, starts that key's load at once
// rather than waiting for a turn that comes only when it returns itself.
func TestGetManyQueuedKeyJoinedByLoader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if key == 1 {
				v, err := c.Get(ctx, 2) // queued behind key 1 itself
				return "1+" + v, err
			}
			return fmt.Sprint("v", key), nil
		})
		c = newCache(t, Options[int, string]{Loader: src, MaxManyLoads: 1, LoadTimeout: time.Hour})
		start := time.Now()
		m, err := c.GetMany(context.Background(), []int{1, 2})
		if err != nil || m[1] != "1+v2" || m[2] != "v2" {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("GetMany took %v of the bubble's time: the loader waited for its own turn", d)
		}
		if n := src.total.Load(); n != 2 {
			t.Fatalf("%d loads, want 2", n)
		}
	})
}

// Close during a GetMany whose keys are queued behind its first loads:
// the queued keys fail with ErrClosed (never loaded), and no goroutine is
// left behind (the bubble would not end).
func TestGetManyQueuedKeysAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-ctx.Done() // until Close
			return "", ctx.Err()
		})
		c := newCache(t, Options[int, string]{Loader: src, MaxManyLoads: 2})
		errc := make(chan error, 1)
		go func() {
			_, err := c.GetMany(context.Background(), []int{1, 2, 3, 4, 5})
			errc <- err
		}()
		synctest.Wait()
		c.Close()
		err := <-errc
		var be *BulkError[int]
		if !errors.As(err, &be) || len(be.Errors) != 5 {
			t.Fatalf("GetMany after Close: %v", err)
		}
		for k, e := range be.Errors {
			if !errors.Is(e, ErrClosed) {
				t.Errorf("key %d: %v, want ErrClosed", k, e)
			}
		}
		if n := src.total.Load(); n != 2 {
			t.Fatalf("%d loads started, want the first 2 only", n)
		}
	})
}

func TestMaxManyLoadsNegativeRefused(t *testing.T) {
	_, err := New(Options[int, string]{Loader: newSource(nil), MaxManyLoads: -1})
	if !errors.Is(err, cachekit.ErrInvalidOptions) {
		t.Fatalf("MaxManyLoads -1: %v", err)
	}
}

// MaxManyLoads bounds the Load calls of one GetMany in flight at once: a
// queued key starts as soon as any of them finishes, not only when the
// one queued MaxManyLoads places before it does. Here key 1 hangs and key
// 2 returns at once: key 3 must start while key 1 is still loading (one
// call in flight, below the bound of two).
func TestGetManyQueuedKeyStartsWhenAnyLoadFinishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if key == 1 {
				<-gate
			}
			return fmt.Sprint("v", key), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, MaxManyLoads: 2})
		done := make(chan error, 1)
		go func() {
			_, err := c.GetMany(context.Background(), []int{1, 2, 3})
			done <- err
		}()
		synctest.Wait() // key 2 has finished; key 1 still loads
		n3 := src.count(3)
		close(gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n3 != 1 {
			t.Fatalf("key 3 not started while only key 1 was loading (1 of MaxManyLoads=2 in flight): it waited for key 1")
		}
	})
}
