package loading

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachekit/cachekit"
)

// ErrNotFound is remembered as a negative entry for NotFoundTTL; a negative
// NotFoundTTL turns that off; zero means TTL.
func TestNotFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		notFound := func(ctx context.Context, key, n int) (string, error) {
			return "", fmt.Errorf("user %d: %w", key, ErrNotFound)
		}
		src := newSource(notFound)
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, NotFoundTTL: 30 * time.Second})
		_, err := c.Get(context.Background(), 1)
		if !errors.Is(err, ErrNotFound) || err.Error() != "user 1: loading: not found" {
			t.Fatalf("Get = %v; want the loader's not-found error", err)
		}
		time.Sleep(30*time.Second - time.Nanosecond)
		if _, err2 := c.Get(context.Background(), 1); err2 != err {
			t.Fatalf("Get within NotFoundTTL = %v; want the remembered error", err2)
		}
		if n := src.count(1); n != 1 {
			t.Fatalf("%d loads within NotFoundTTL; want 1", n)
		}
		time.Sleep(time.Nanosecond)
		c.Get(context.Background(), 1)
		if n := src.count(1); n != 2 {
			t.Fatalf("%d loads after NotFoundTTL; want 2", n)
		}
		if s := c.Stats(); s.ErrorHits != 1 || s.LoadErrors != 0 || s.Loads != 2 {
			t.Fatalf("stats %+v; want 1 error hit, 2 loads, no load error", s)
		}

		// Not cached: every Get loads. A not-found answer also removes an
		// older value.
		src2 := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				return "exists", nil
			}
			return notFound(ctx, key, n)
		})
		c2 := newCache(t, Options[int, string]{Loader: src2, TTL: time.Minute, RefreshAfter: time.Second, NotFoundTTL: -1})
		mustGet(t, c2, 1, "exists")
		time.Sleep(2 * time.Second)
		mustGet(t, c2, 1, "exists") // refresh ahead: the reload says not found
		synctest.Wait()
		for range 3 {
			if _, err := c2.Get(context.Background(), 1); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get = %v; want ErrNotFound", err)
			}
		}
		if n := src2.count(1); n != 5 {
			t.Fatalf("%d loads; want 5", n)
		}

		// Zero: the TTL.
		src3 := newSource(notFound)
		c3 := newCache(t, Options[int, string]{Loader: src3, TTL: time.Minute})
		c3.Get(context.Background(), 1)
		time.Sleep(time.Minute - time.Nanosecond)
		c3.Get(context.Background(), 1)
		time.Sleep(time.Nanosecond)
		c3.Get(context.Background(), 1)
		if n := src3.count(1); n != 2 {
			t.Fatalf("%d loads; want 2 (NotFoundTTL = TTL)", n)
		}
	})
}

// TTLJitter spreads the lifetimes of values (and of errors) loaded together
// over TTL·(1 ± jitter/2).
func TestJitter(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	synctest.Test(t, func(t *testing.T) {
		const ttl, errorTTL = 100 * time.Second, 10 * time.Second
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if key%2 == 1 {
				return "", errSource
			}
			return "v", nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: ttl, TTLJitter: 0.2, RefreshAfter: ttl / 2, ErrorTTL: errorTTL})
		c.rand = rand.New(rand.NewPCG(seed, seed)).Float64
		const n = 2000
		for k := range n {
			c.Get(context.Background(), k)
		}
		span := func(d time.Duration) (lo, hi time.Duration) { return d * 9 / 10, d * 11 / 10 }
		var lives0, errs []time.Duration
		for k := range n {
			r, ok := c.core.Peek(k)
			if !ok {
				t.Fatalf("key %d not cached", k)
			}
			if k%2 == 0 {
				life := time.Duration(r.freshUntil - r.loadedAt)
				lo, hi := span(ttl)
				if life < lo || life > hi {
					t.Fatalf("key %d: TTL %v outside [%v, %v]", k, life, lo, hi)
				}
				if refresh := time.Duration(r.nextLoad - r.loadedAt); refresh*2 != life && refresh*2+1 != life && refresh*2-1 != life {
					t.Fatalf("key %d: refresh age %v is not half the TTL %v", k, refresh, life)
				}
				lives0 = append(lives0, life)
			} else {
				life := time.Duration(r.retryAt)
				// Failures: never shorter than ErrorTTL, up to 20% longer.
				lo, hi := errorTTL, errorTTL*12/10
				if life < lo || life > hi {
					t.Fatalf("key %d: error TTL %v outside [%v, %v]", k, life, lo, hi)
				}
				errs = append(errs, life)
			}
		}
		for i, lives := range [][]time.Duration{lives0, errs} {
			nominal := []time.Duration{ttl, errorTTL}[i]
			lo, hi := lives[0], lives[0]
			for _, l := range lives {
				lo, hi = min(lo, l), max(hi, l)
			}
			// n/2 uniform draws over a 20% band: the extremes are within
			// 1% of its ends with overwhelming probability.
			if spread := float64(hi-lo) / float64(nominal); spread < 0.18 {
				t.Fatalf("lifetimes spread over only %.3f of the TTL (%v..%v)", spread, lo, hi)
			}
		}
		// Behaviourally: at 89s nothing has expired; at 111s everything.
		count := func() (stale int) {
			for k := 0; k < n; k += 2 {
				r, ok := c.core.Peek(k)
				if !ok {
					stale++ // gone from the core cache: its hard end passed
				} else if st, _ := c.view(r, c.now(), c.epoch.Load()); st != fresh {
					stale++
				}
			}
			return stale
		}
		time.Sleep(89 * time.Second)
		if s := count(); s != 0 {
			t.Fatalf("%d values expired before TTL·0.9", s)
		}
		time.Sleep(22 * time.Second)
		if s := count(); s != n/2 {
			t.Fatalf("%d of %d values expired after TTL·1.1", s, n/2)
		}
	})
}

// MaxConcurrentRefreshes bounds background reloads; a skipped one is
// retried by a later read.
func TestMaxConcurrentRefreshes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n > 1 {
				<-gate
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, RefreshAfter: time.Minute, MaxConcurrentRefreshes: 2})
		for k := 1; k <= 5; k++ {
			mustGet(t, c, k, fmt.Sprintf("v%d.1", k))
		}
		time.Sleep(2 * time.Minute)
		for k := 1; k <= 5; k++ {
			mustGet(t, c, k, fmt.Sprintf("v%d.1", k))
		}
		synctest.Wait()
		if n := src.total.Load(); n != 5+2 {
			t.Fatalf("%d loads; want 5 + 2 refreshes", n-5)
		}
		if s := c.Stats(); s.Refreshes != 2 || s.RefreshesSkipped != 3 {
			t.Fatalf("stats %+v; want 2 refreshes, 3 skipped", s)
		}
		close(gate)
		synctest.Wait()
		for k := 1; k <= 5; k++ { // the skipped keys are retried now
			c.Get(context.Background(), k)
			synctest.Wait()
		}
		for k := 1; k <= 5; k++ {
			if n := src.count(k); n != 2 {
				t.Fatalf("key %d loaded %d times; want 2", k, n)
			}
			mustGet(t, c, k, fmt.Sprintf("v%d.2", k))
		}
	})
}

// A failed refresh of a fresh value keeps serving it, without error, and
// retries after ErrorTTL.
func TestFailedRefreshKeepsFreshValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				return "v", nil
			}
			return "", errSource
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, RefreshAfter: time.Minute, ErrorTTL: 10 * time.Second})
		mustGet(t, c, 1, "v")
		time.Sleep(time.Minute)
		for range 100 {
			mustGet(t, c, 1, "v")
			time.Sleep(time.Second)
		}
		// 100s of reads after the refresh age: one attempt per 10s.
		if n := src.count(1); n != 1+10 {
			t.Fatalf("%d loads; want 1 + 10 refresh attempts", n)
		}
	})
}

// Stats: loads, errors, load time, shared results, refreshes, stale hits,
// hits and misses, on the cache's clock.
func TestStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			time.Sleep(2 * time.Second)
			switch {
			case key == 1 && n == 1:
				<-gate
			case key == 2:
				return "", errSource
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Minute, MaxStale: time.Minute})
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { c.Get(context.Background(), 1) })
		}
		synctest.Wait()
		close(gate)
		wg.Wait()                      // 1 load (2s), 3 misses, 2 shared
		mustGet(t, c, 1, "v1.1")       // hit
		mustGet(t, c, 1, "v1.1")       // hit
		c.Get(context.Background(), 2) // miss, load error (2s)
		c.Get(context.Background(), 2) // error hit
		time.Sleep(90 * time.Second)   // key 1 stale
		c.Get(context.Background(), 1) // stale hit, refresh (2s)
		time.Sleep(2 * time.Second)    // the refresh ends at this instant:
		synctest.Wait()                // let it store its value
		mustGet(t, c, 1, "v1.2")       // hit
		want := Stats{
			Hits: 3, StaleHits: 1, ErrorHits: 1, Misses: 4, Shared: 2,
			Loads: 3, LoadErrors: 1, LoadTime: 6 * time.Second, Refreshes: 1,
		}
		got := c.Stats()
		got.Core = cachekit.Stats{}
		if got != want {
			t.Fatalf("stats\n%+v\nwant\n%+v", got, want)
		}
		if got.AvgLoadTime() != 2*time.Second {
			t.Fatalf("AvgLoadTime %v", got.AvgLoadTime())
		}
	})
}

// Set stores a fresh value; a value heavier than MaxWeight is refused and
// removes the key's older value.
func TestSetAndWeight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{
			Loader:    src,
			MaxWeight: 10,
			Weigher:   func(k int, v string) uint32 { return uint32(len(v)) },
			TTL:       time.Minute,
		})
		if !c.Set(1, "short") {
			t.Fatal("Set refused a light value")
		}
		mustGet(t, c, 1, "short")
		if c.Set(1, "much too long") {
			t.Fatal("Set accepted a value heavier than MaxWeight")
		}
		mustGet(t, c, 1, "v1.1") // the old value is gone: loaded
		time.Sleep(time.Minute)
		mustGet(t, c, 1, "v1.2") // TTL applies to loaded values
		c.Set(2, "x")
		time.Sleep(time.Minute)
		mustGet(t, c, 2, "v2.1") // and to Set ones
	})
}

// Close cancels the loads in flight, foreground and background, waits for
// them, and makes every method report ErrClosed. The bubble checks that no
// goroutine is left behind.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		returned := make(chan int, 2)
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 && key == 1 {
				return "v", nil
			}
			<-ctx.Done()
			returned <- key
			if key == 1 {
				return "late but loaded", nil
			}
			return "", context.Cause(ctx)
		})
		c, err := New(Options[int, string]{Loader: src, Clock: bubbleClock{}, TTL: time.Hour, RefreshAfter: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, c, 1, "v")
		time.Sleep(2 * time.Minute)
		mustGet(t, c, 1, "v") // starts a background refresh, which hangs
		waiter := make(chan error, 1)
		go func() {
			_, err := c.Get(context.Background(), 2) // a foreground load, which hangs
			waiter <- err
		}()
		synctest.Wait()
		c.Close()
		if len(returned) != 2 {
			t.Fatalf("Close returned before the loaders (%d of 2 returned)", len(returned))
		}
		if err := <-waiter; !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter got %v; want ErrClosed", err)
		}
		if _, err := c.Get(context.Background(), 1); err != ErrClosed {
			t.Fatalf("Get after Close = %v", err)
		}
		if _, err := c.GetMany(context.Background(), []int{1}); err != ErrClosed {
			t.Fatalf("GetMany after Close = %v", err)
		}
		if c.Set(1, "x") {
			t.Fatal("Set after Close stored")
		}
		c.Delete(1)
		c.ExpireAll()
		c.InvalidateAll()
		c.Close() // idempotent
	})
}

// A Close racing with Gets, GetManys and refreshes: every call returns, and
// no goroutine outlives the cache (the bubble would report it).
func TestCloseRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			select {
			case <-time.After(time.Duration(key) * time.Millisecond):
				return "v", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		c, err := New(Options[int, string]{Loader: src, Clock: bubbleClock{}, TTL: 5 * time.Millisecond, RefreshAfter: 2 * time.Millisecond, MaxStale: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 100 {
					if g%2 == 0 {
						c.Get(context.Background(), i%10)
					} else {
						c.GetMany(context.Background(), keyRange(i%10, i%10+5))
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
		time.Sleep(50 * time.Millisecond)
		c.Close()
		wg.Wait()
	})
}

func TestOptionsValidation(t *testing.T) {
	ld := LoaderFunc[int, int](func(ctx context.Context, k int) (int, error) { return k, nil })
	bad := []Options[int, int]{
		{},
		{Loader: ld, TTL: -1},
		{Loader: ld, TTLJitter: 1},
		{Loader: ld, RefreshAfter: -1},
		{Loader: ld, TTL: time.Second, RefreshAfter: time.Second},
		{Loader: ld, MaxStale: -1},
		{Loader: ld, MaxConcurrentRefreshes: -1},
		{Loader: ld, MaxEntries: -1},                           // the core's
		{Loader: ld, MaxWeight: 10},                            // the core's
		{Loader: ld, Policy: "lru"},                            // the core's
		{Loader: ld, MaxEntries: 10, Policy: "no such policy"}, // the core's
	}
	for i, o := range bad {
		if _, err := New(o); !errors.Is(err, cachekit.ErrInvalidOptions) {
			t.Errorf("options %d: New = %v; want ErrInvalidOptions", i, err)
		}
	}
	c, err := New(Options[int, int]{Loader: ld, RefreshAfter: time.Second}) // refresh without TTL is fine
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	defer func() {
		if recover() == nil {
			t.Fatal("Must did not panic")
		}
	}()
	Must(Options[int, int]{})
}

// Without a Clock the cache runs on the real monotonic clock.
func TestRealClock(t *testing.T) {
	src := newSource(nil)
	c, err := New(Options[int, string]{Loader: src, TTL: time.Hour, MaxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustGet(t, c, 1, "v1.1")
	mustGet(t, c, 1, "v1.1")
	if r, ok := c.core.Peek(1); !ok || time.Duration(r.freshUntil-r.loadedAt) != time.Hour {
		t.Fatal("the record's TTL is not an hour")
	}
}

// A Close that lands between a caller's miss and the start of its load
// fails the load's waiters with ErrClosed, and a refresh claimed after
// Close does not start.
func TestCloseBeforeLaunch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c, err := New(Options[int, string]{Loader: src, Clock: bubbleClock{}, TTL: time.Hour, RefreshAfter: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, c, 1, "v1.1")
		time.Sleep(2 * time.Minute)
		r, _ := c.core.Peek(1)
		c.beforeFlight = func(int) { c.Close() }
		if _, err := c.Get(context.Background(), 2); err != ErrClosed {
			t.Fatalf("Get = %v; want ErrClosed", err)
		}
		r.refreshing.Store(true)
		c.refresh(context.Background(), 1, r)
		if n := src.total.Load(); n != 1 || r.refreshing.Load() {
			t.Fatalf("%d loads, refreshing %v; want no refresh after Close", n, r.refreshing.Load())
		}
	})
}
