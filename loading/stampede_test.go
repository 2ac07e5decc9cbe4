package loading

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

const stampede = 1000

// 1000 goroutines on a cold key: exactly one loader call, and every caller
// gets its result.
func TestStampedeColdKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-gate
			return "value", nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Minute})

		var wg sync.WaitGroup
		got := make([]string, stampede)
		errs := make([]error, stampede)
		for i := range stampede {
			wg.Go(func() { got[i], errs[i] = c.Get(context.Background(), 7) })
		}
		synctest.Wait() // every caller is waiting, the loader is at the gate
		if n := src.total.Load(); n != 1 {
			t.Fatalf("%d loader calls while %d callers wait; want 1", n, stampede)
		}
		close(gate)
		wg.Wait()
		for i := range stampede {
			if got[i] != "value" || errs[i] != nil {
				t.Fatalf("caller %d got %q, %v", i, got[i], errs[i])
			}
		}
		if n := src.total.Load(); n != 1 {
			t.Fatalf("%d loader calls; want 1", n)
		}
		s := c.Stats()
		if s.Loads != 1 || s.Misses != stampede || s.Shared != stampede-1 || s.Hits != 0 {
			t.Fatalf("stats %+v; want 1 load, %d misses, %d shared, 0 hits", s, stampede, stampede-1)
		}
		mustGet(t, c, 7, "value")
		if s := c.Stats(); s.Hits != 1 {
			t.Fatalf("hits %d after a cached read; want 1", s.Hits)
		}
	})
}

// hotKey loads key 1, lets fake time pass by age, then runs 1000 readers
// while the reload is held at a gate. Every reader must return at once
// (no fake time passes, and wg.Wait returns while the reload is still
// blocked: if any reader waited for it, the bubble would deadlock), and
// exactly one background reload must run.
func hotKey(t *testing.T, opts Options[int, string], age time.Duration, wantErr error) {
	gate := make(chan struct{})
	src := newSource(func(ctx context.Context, key, n int) (string, error) {
		if n > 1 {
			<-gate
		}
		return map[int]string{1: "old", 2: "new"}[n], nil
	})
	opts.Loader = src
	c := newCache(t, opts)
	mustGet(t, c, 1, "old")
	time.Sleep(age)

	start := time.Now()
	var wg sync.WaitGroup
	var bad atomic.Int64
	for range stampede {
		wg.Go(func() {
			v, err := c.Get(context.Background(), 1)
			if v != "old" || !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
				bad.Add(1)
				t.Errorf("Get = %q, %v; want \"old\", %v", v, err, wantErr)
			}
		})
	}
	wg.Wait()
	if d := time.Since(start); d != 0 {
		t.Fatalf("readers took %v of fake time; want 0 (no reader waits)", d)
	}
	synctest.Wait() // the reload is at the gate
	if n := src.count(1); n != 2 {
		t.Fatalf("%d loader calls; want 2 (the first load and one background reload)", n)
	}
	close(gate)
	synctest.Wait()
	mustGet(t, c, 1, "new")
	if n := src.count(1); n != 2 {
		t.Fatalf("%d loader calls after the reload; want 2", n)
	}
	if s := c.Stats(); s.Refreshes != 1 || s.Loads != 2 {
		t.Fatalf("stats %+v; want 1 refresh, 2 loads", s)
	}
}

// An expired hot key with refresh ahead: past RefreshAfter, 1000 readers get
// the value at once and exactly one background reload runs.
func TestHotKeyRefreshAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hotKey(t, Options[int, string]{TTL: 10 * time.Minute, RefreshAfter: time.Minute}, 2*time.Minute, nil)
	})
}

// The same past the TTL with MaxStale (stale-while-revalidate): the readers
// get the old value marked stale.
func TestHotKeyStaleWhileRevalidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hotKey(t, Options[int, string]{TTL: time.Minute, MaxStale: 10 * time.Minute}, 2*time.Minute, ErrStale)
	})
}

type ctxKey struct{}

// The first caller's context is cancelled: that caller returns at once, the
// load goes on (its context is not cancelled, and it sees the first caller's
// values), and the other callers get the value.
func TestFirstCallerCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var sawValue any
		var loadErr error
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			sawValue = ctx.Value(ctxKey{})
			<-gate
			loadErr = ctx.Err()
			return "value", nil
		})
		c := newCache(t, Options[int, string]{Loader: src})

		ctxA, cancelA := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "first"))
		errA := make(chan error, 1)
		go func() {
			_, err := c.Get(ctxA, 1)
			errA <- err
		}()
		synctest.Wait() // A started the load and waits
		var wg sync.WaitGroup
		got := make([]string, 10)
		for i := range got {
			wg.Go(func() {
				v, err := c.Get(context.Background(), 1)
				if err != nil {
					t.Errorf("Get: %v", err)
				}
				got[i] = v
			})
		}
		synctest.Wait()
		cancelA()
		synctest.Wait()
		select {
		case err := <-errA:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("first caller got %v; want context.Canceled", err)
			}
		default:
			t.Fatal("the cancelled first caller is still waiting")
		}
		close(gate)
		wg.Wait()
		for i, v := range got {
			if v != "value" {
				t.Fatalf("caller %d got %q", i, v)
			}
		}
		if sawValue != "first" {
			t.Fatalf("loader saw context value %v; want the first caller's", sawValue)
		}
		if loadErr != nil {
			t.Fatalf("the load's context was cancelled: %v", loadErr)
		}
		mustGet(t, c, 1, "value")
		if n := src.total.Load(); n != 1 {
			t.Fatalf("%d loader calls; want 1", n)
		}
	})
}

// A waiter's deadline: it returns at its deadline with its context's error;
// the load goes on and its result is cached.
func TestWaiterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			time.Sleep(5 * time.Second)
			return "value", nil
		})
		c := newCache(t, Options[int, string]{Loader: src})

		other := make(chan string, 1)
		go func() {
			v, _ := c.Get(context.Background(), 1)
			other <- v
		}()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Get(ctx, 1)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get with a deadline = %v; want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Fatalf("the waiter returned after %v; want its 1s deadline", d)
		}
		if v := <-other; v != "value" {
			t.Fatalf("the other waiter got %q", v)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("the load took %v; want 5s", d)
		}
		mustGet(t, c, 1, "value")
		if n := src.total.Load(); n != 1 {
			t.Fatalf("%d loader calls; want 1", n)
		}
	})
}
