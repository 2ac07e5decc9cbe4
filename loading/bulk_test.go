package loading

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Overlapping GetMany calls for keys 1..100 and 50..150: every key is loaded
// exactly once in total; the second call loads only 101..150 and waits for
// the first call's load of 50..100.
func TestOverlappingGetMany(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			<-gate
			m := make(map[int]string, len(keys))
			for _, k := range keys {
				m[k] = fmt.Sprintf("v%d", k)
			}
			return m, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk})
		results := make([]map[int]string, 2)
		errs := make([]error, 2)
		ranges := [][2]int{{1, 100}, {50, 150}}
		var wg sync.WaitGroup
		for i, r := range ranges {
			wg.Go(func() { results[i], errs[i] = c.GetMany(context.Background(), keyRange(r[0], r[1])) })
			synctest.Wait() // the first call's load is in flight before the second starts
		}
		close(gate)
		wg.Wait()
		for i, r := range ranges {
			if errs[i] != nil || len(results[i]) != r[1]-r[0]+1 {
				t.Fatalf("GetMany %v = %d values, %v", r, len(results[i]), errs[i])
			}
			for _, k := range keyRange(r[0], r[1]) {
				if results[i][k] != fmt.Sprintf("v%d", k) {
					t.Fatalf("GetMany %v: key %d = %q", r, k, results[i][k])
				}
			}
		}
		calls, keys := bulk.snapshot()
		for k := 1; k <= 150; k++ {
			if keys[k] != 1 {
				t.Fatalf("key %d loaded %d times; want 1", k, keys[k])
			}
		}
		if len(calls) != 2 || !slices.Equal(calls[1], keyRange(101, 150)) {
			t.Fatalf("LoadMany calls %v; want 1..100 then 101..150", calls)
		}
		if s := c.Stats(); s.Loads != 2 || s.Shared != 51 {
			t.Fatalf("stats %+v; want 2 loads, 51 shared", s)
		}
	})
}

// Many concurrent GetMany and Get calls over random overlapping ranges: every
// key is still loaded exactly once in total.
func TestOverlappingGetManyRandom(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 1))
		delay := func() time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return time.Duration(rng.IntN(5)) * time.Millisecond
		}
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			time.Sleep(delay())
			m := make(map[int]string, len(keys))
			for _, k := range keys {
				m[k] = fmt.Sprintf("v%d", k)
			}
			return m, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk})
		var wg sync.WaitGroup
		for g := range 16 {
			r := rand.New(rand.NewPCG(seed, uint64(g)+2))
			wg.Go(func() {
				for range 20 {
					lo := 1 + r.IntN(200)
					hi := lo + r.IntN(60)
					if r.IntN(4) == 0 {
						if v, err := c.Get(context.Background(), lo); err != nil || v != fmt.Sprintf("v%d", lo) {
							t.Errorf("Get(%d) = %q, %v", lo, v, err)
						}
					} else if m, err := c.GetMany(context.Background(), keyRange(lo, hi)); err != nil || len(m) != hi-lo+1 {
						t.Errorf("GetMany(%d..%d) = %d values, %v", lo, hi, len(m), err)
					}
					time.Sleep(time.Duration(r.IntN(3)) * time.Millisecond)
				}
			})
		}
		wg.Wait()
		_, keys := bulk.snapshot()
		for k, n := range keys {
			if n != 1 {
				t.Fatalf("key %d loaded %d times; want 1", k, n)
			}
		}
	})
}

// Per-key errors, missing keys and partial results of a BulkLoader.
func TestBulkLoaderResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errOdd := errors.New("odd key")
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			m := map[int]string{}
			be := &BulkError[int]{Errors: map[int]error{}}
			for _, k := range keys {
				switch {
				case k >= 100: // a whole-call failure with a partial result
					return map[int]string{100: "v100", 999: "not asked for"}, errSource
				case k%2 == 0:
					m[k] = fmt.Sprintf("v%d", k)
				case k == 5:
					be.Errors[k] = fmt.Errorf("key 5: %w", ErrNotFound)
				case k == 7:
					// missing: not found
				default:
					be.Errors[k] = errOdd
				}
			}
			return m, be
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk, ErrorTTL: time.Minute, TTL: time.Hour})
		m, err := c.GetMany(context.Background(), []int{1, 2, 3, 4, 5, 6, 7, 2, 4})
		var be *BulkError[int]
		if !errors.As(err, &be) {
			t.Fatalf("GetMany error %v; want a *BulkError", err)
		}
		if len(m) != 3 || m[2] != "v2" || m[4] != "v4" || m[6] != "v6" {
			t.Fatalf("values %v", m)
		}
		want := map[int]error{1: errOdd, 3: errOdd, 5: ErrNotFound, 7: ErrNotFound}
		if len(be.Errors) != len(want) {
			t.Fatalf("errors %v; want %v", be.Errors, want)
		}
		for k, w := range want {
			if !errors.Is(be.Errors[k], w) {
				t.Fatalf("key %d: %v; want %v", k, be.Errors[k], w)
			}
		}
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, errOdd) || errors.Is(err, ErrStale) {
			t.Fatal("BulkError does not unwrap to its per-key errors")
		}
		// Everything is remembered: no new call.
		m2, _ := c.GetMany(context.Background(), []int{1, 2, 3, 4, 5, 6, 7})
		if calls, _ := bulk.snapshot(); len(calls) != 1 || len(m2) != 3 {
			t.Fatalf("%d LoadMany calls, %v; want 1 and the cached values", len(calls), m2)
		}

		// A whole-call error with a partial result.
		m, err = c.GetMany(context.Background(), []int{100, 101})
		if !errors.As(err, &be) || m[100] != "v100" || len(m) != 1 || !errors.Is(be.Errors[101], errSource) || len(be.Errors) != 1 {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if _, ok := c.core.Peek(999); ok {
			t.Fatal("a key not asked for was cached")
		}
		if s := c.Stats(); s.Loads != 2 || s.LoadErrors != 2 {
			t.Fatalf("stats %+v; want 2 loads, both failing some key", s)
		}
	})
}

// Get with only a BulkLoader, and GetMany with only a Loader.
func TestLoaderKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bulk := newBulkSource(nil)
		cb := newCache(t, Options[int, string]{BulkLoader: bulk})
		if v, err := cb.Get(context.Background(), 3); v != "v3" || err != nil {
			t.Fatalf("Get via BulkLoader = %q, %v", v, err)
		}
		if calls, _ := bulk.snapshot(); len(calls) != 1 || !slices.Equal(calls[0], []int{3}) {
			t.Fatalf("LoadMany calls %v", calls)
		}

		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-gate
			return fmt.Sprintf("v%d", key), nil
		})
		cl := newCache(t, Options[int, string]{Loader: src})
		done := make(chan struct{})
		go func() {
			defer close(done)
			m, err := cl.GetMany(context.Background(), keyRange(1, 10))
			if err != nil || len(m) != 10 {
				t.Errorf("GetMany via Loader = %v, %v", m, err)
			}
		}()
		synctest.Wait()
		if n := src.total.Load(); n != 10 {
			t.Fatalf("%d concurrent Load calls; want 10", n)
		}
		close(gate)
		<-done
	})
}

// GetMany serves stale values with a per-key ErrStale and refreshes all its
// due keys in one background LoadMany call.
func TestGetManyStaleBatchRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		round := 0
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			round++
			m := make(map[int]string, len(keys))
			for _, k := range keys {
				m[k] = fmt.Sprintf("v%d.%d", k, round)
			}
			return m, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk, TTL: time.Minute, MaxStale: time.Hour})
		if _, err := c.GetMany(context.Background(), keyRange(1, 5)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		mustGet(t, c, 6, "v6.2") // a fresh key among stale ones
		m, err := c.GetMany(context.Background(), keyRange(1, 6))
		var be *BulkError[int]
		if !errors.As(err, &be) || len(m) != 6 || len(be.Errors) != 5 || m[6] != "v6.2" {
			t.Fatalf("GetMany = %v, %v; want 6 values, 5 stale", m, err)
		}
		for k := 1; k <= 5; k++ {
			if m[k] != fmt.Sprintf("v%d.1", k) || !errors.Is(be.Errors[k], ErrStale) {
				t.Fatalf("key %d = %q, %v", k, m[k], be.Errors[k])
			}
		}
		synctest.Wait()
		calls, _ := bulk.snapshot()
		if len(calls) != 3 || !slices.Equal(calls[2], keyRange(1, 5)) {
			t.Fatalf("LoadMany calls %v; want one refresh of 1..5", calls)
		}
		m, err = c.GetMany(context.Background(), keyRange(1, 5))
		if err != nil || m[1] != "v1.3" {
			t.Fatalf("after the refresh: %v, %v", m, err)
		}
		if s := c.Stats(); s.Refreshes != 5 || s.StaleHits != 5 {
			t.Fatalf("stats %+v; want 5 refreshes, 5 stale hits", s)
		}
	})
}

// A GetMany whose context ends returns at once with what it has; the loads
// go on and are cached.
func TestGetManyContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			time.Sleep(time.Duration(keys[0]) * time.Second)
			return map[int]string{keys[0]: "v"}, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk})
		mustGet(t, c, 1, "v") // cached: 1s of fake time
		go c.Get(context.Background(), 5)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		m, err := c.GetMany(ctx, []int{1, 5})
		var be *BulkError[int]
		if !errors.As(err, &be) || m[1] != "v" || !errors.Is(be.Errors[5], context.DeadlineExceeded) {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("returned after %v; want 2s", d)
		}
		time.Sleep(3 * time.Second) // the load of 5 ends at this instant:
		synctest.Wait()             // let it store its value
		mustGet(t, c, 5, "v")
		if calls, _ := bulk.snapshot(); len(calls) != 2 {
			t.Fatalf("%d calls; want 2", len(calls))
		}
	})
}

// With a BulkLoader, GetMany's due keys share one slot; when none is free
// they are skipped and retried by a later read.
func TestGetManyRefreshWithoutSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			if keys[0] == 9 && len(keys) == 1 {
				<-gate // key 9's refresh holds the only slot
			}
			m := make(map[int]string, len(keys))
			for _, k := range keys {
				m[k] = "v"
			}
			return m, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk, TTL: time.Hour, RefreshAfter: time.Minute, MaxConcurrentRefreshes: 1})
		if _, err := c.GetMany(context.Background(), []int{1, 2, 3, 9}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		mustGet(t, c, 9, "v") // refresh of 9 takes the slot and hangs
		synctest.Wait()
		if _, err := c.GetMany(context.Background(), []int{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		if s := c.Stats(); s.Refreshes != 1 || s.RefreshesSkipped != 3 {
			t.Fatalf("stats %+v; want 1 refresh, 3 skipped", s)
		}
		close(gate)
		synctest.Wait()
		c.GetMany(context.Background(), []int{1, 2, 3})
		synctest.Wait()
		calls, _ := bulk.snapshot()
		if len(calls) != 3 || !slices.Equal(calls[2], []int{1, 2, 3}) {
			t.Fatalf("LoadMany calls %v; want the retried refresh of 1, 2, 3 in one call", calls)
		}
	})
}

func TestBulkErrorMessage(t *testing.T) {
	one := &BulkError[int]{Errors: map[int]error{4: errSource}}
	if got := one.Error(); got != "loading: key 4: source unavailable" {
		t.Fatalf("Error() = %q", got)
	}
	two := &BulkError[int]{Errors: map[int]error{4: errSource, 5: errSource}}
	if got := two.Error(); !strings.HasPrefix(got, "loading: 2 keys failed, among them ") {
		t.Fatalf("Error() = %q", got)
	}
	if got := (&BulkError[int]{}).Error(); got != "loading: no key failed" {
		t.Fatalf("Error() = %q", got)
	}
}
