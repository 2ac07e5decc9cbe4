package loading

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

var errSource = errors.New("source unavailable")

// faulty runs 20 waiters on a key whose first load does what fault does,
// checks that every waiter got the same *PanicError, and that the key then
// loads normally.
func faulty(t *testing.T, fault func()) *PanicError {
	gate := make(chan struct{})
	src := newSource(func(ctx context.Context, key, n int) (string, error) {
		if n == 1 {
			<-gate
			fault()
		}
		return "ok", nil
	})
	c := newCache(t, Options[int, string]{Loader: src, ErrorTTL: time.Hour})
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.Get(context.Background(), 1) })
	}
	synctest.Wait()
	close(gate)
	wg.Wait()
	var first *PanicError
	for i, err := range errs {
		var pe *PanicError
		if !errors.As(err, &pe) {
			t.Fatalf("waiter %d got %v; want a *PanicError", i, err)
		}
		if first == nil {
			first = pe
		} else if pe != first {
			t.Fatalf("waiter %d got another error than waiter 0", i)
		}
	}
	if !strings.Contains(string(first.Stack), "loading.faulty") {
		t.Fatalf("the stack does not show the loader:\n%s", first.Stack)
	}
	// Not poisoned: the next Get loads again (panics are not cached, even
	// with a long ErrorTTL).
	mustGet(t, c, 1, "ok")
	if n := src.total.Load(); n != 2 {
		t.Fatalf("%d loader calls; want 2", n)
	}
	if s := c.Stats(); s.LoadErrors != 1 || s.Loads != 2 {
		t.Fatalf("stats %+v; want 2 loads, 1 error", s)
	}
	return first
}

func TestLoaderPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		pe := faulty(t, func() { panic(boom) })
		if pe.Value != boom || pe.Goexit || !errors.Is(pe, boom) {
			t.Fatalf("PanicError %+v; want the panic value, errors.Is-able", pe)
		}
		if !strings.Contains(pe.Error(), "boom") {
			t.Fatalf("Error() = %q", pe.Error())
		}
	})
}

func TestLoaderPanicNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pe := faulty(t, func() { panic(nil) })
		var pn *runtime.PanicNilError
		if pe.Goexit || !errors.As(pe, &pn) {
			t.Fatalf("PanicError %+v; want a *runtime.PanicNilError value", pe)
		}
	})
}

func TestLoaderGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pe := faulty(t, runtime.Goexit)
		if !pe.Goexit || pe.Value != nil {
			t.Fatalf("PanicError %+v; want Goexit", pe)
		}
		if !strings.Contains(string(pe.Stack), "runtime.Goexit") {
			t.Fatalf("the stack does not show Goexit:\n%s", pe.Stack)
		}
	})
}

// A panic in a bulk loader fails every key of the call.
func TestBulkLoaderPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			calls++
			if calls == 1 {
				panic("bulk boom")
			}
			return map[int]string{1: "a", 2: "b"}, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk})
		m, err := c.GetMany(context.Background(), []int{1, 2})
		var be *BulkError[int]
		if len(m) != 0 || !errors.As(err, &be) || len(be.Errors) != 2 {
			t.Fatalf("GetMany = %v, %v; want two per-key errors", m, err)
		}
		for k, err := range be.Errors {
			var pe *PanicError
			if !errors.As(err, &pe) || pe.Value != "bulk boom" {
				t.Fatalf("key %d: %v; want the panic", k, err)
			}
		}
		m, err = c.GetMany(context.Background(), []int{1, 2})
		if err != nil || m[1] != "a" || m[2] != "b" {
			t.Fatalf("GetMany after the panic = %v, %v", m, err)
		}
	})
}

// A failing loader: all waiters get the same error, and while the source
// keeps failing it is called at most once per key per ErrorTTL.
func TestFailingLoader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				<-gate
			}
			return "", fmt.Errorf("call %d: %w", n, errSource) // a new error each call
		})
		const errorTTL = time.Second
		c := newCache(t, Options[int, string]{Loader: src, ErrorTTL: errorTTL, TTL: time.Minute})

		var wg sync.WaitGroup
		errs := make([]error, 100)
		for i := range errs {
			wg.Go(func() { _, errs[i] = c.Get(context.Background(), 1) })
		}
		synctest.Wait()
		close(gate)
		wg.Wait()
		for i, err := range errs {
			if err != errs[0] || !errors.Is(err, errSource) {
				t.Fatalf("waiter %d got %v; waiter 0 got %v; want the same source error", i, err, errs[0])
			}
		}

		// 20 readers hammer the key every 10ms for 10s of fake time.
		for range 20 {
			wg.Go(func() {
				for range 1000 {
					if _, err := c.Get(context.Background(), 1); !errors.Is(err, errSource) {
						t.Errorf("Get = %v; want the source error", err)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		times := src.callTimes()
		for i := 1; i < len(times); i++ {
			if d := times[i] - times[i-1]; d < errorTTL {
				t.Fatalf("source calls %d and %d only %v apart; want at least ErrorTTL %v (calls at %v)", i-1, i, d, errorTTL, times)
			}
		}
		if len(times) < 10 || len(times) > 11 {
			t.Fatalf("%d source calls in 10s with ErrorTTL 1s; want 10 or 11 (at %v)", len(times), times)
		}
		s := c.Stats()
		if s.Loads != uint64(len(times)) || s.LoadErrors != s.Loads || s.ErrorHits == 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// Stale-if-error: past the TTL, while reloads fail, the last value is served
// (stale, wrapping the failure) until MaxStale ends, and the failure after
// it; the source is still called at most once per ErrorTTL.
func TestStaleIfError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				return "good", nil
			}
			return "", errSource
		})
		const (
			ttl      = 10 * time.Second
			maxStale = 5 * time.Second
			errorTTL = time.Second
		)
		c := newCache(t, Options[int, string]{Loader: src, TTL: ttl, MaxStale: maxStale, ErrorTTL: errorTTL})
		start := time.Now()
		mustGet(t, c, 1, "good")

		time.Sleep(ttl - time.Millisecond)
		mustGet(t, c, 1, "good") // still fresh: no reload
		time.Sleep(time.Millisecond)

		staleServed := 0
		for time.Since(start) < ttl+maxStale+3*time.Second {
			at := time.Since(start)
			v, err := c.Get(context.Background(), 1)
			switch {
			case at < ttl+maxStale:
				if v != "good" || !errors.Is(err, ErrStale) {
					t.Fatalf("at %v: Get = %q, %v; want the stale value", at, v, err)
				}
				// The first stale read starts the reload; from the next
				// one on the failure is wrapped in the error.
				if at > ttl && !errors.Is(err, errSource) {
					t.Fatalf("at %v: %v does not wrap the reload's failure", at, err)
				}
				staleServed++
			default:
				if v != "" || errors.Is(err, ErrStale) || !errors.Is(err, errSource) {
					t.Fatalf("at %v (past MaxStale): Get = %q, %v; want the source error", at, v, err)
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		times := src.callTimes()
		for i := 1; i < len(times); i++ {
			if d := times[i] - times[i-1]; d < errorTTL {
				t.Fatalf("source calls only %v apart (calls at %v)", d, times)
			}
		}
		if s := c.Stats(); s.StaleHits != uint64(staleServed) {
			t.Fatalf("StaleHits %d; want %d", s.StaleHits, staleServed)
		}
	})
}

// A loader asking the cache for its own key gets ErrReentrant at once, not
// a deadlock; the guard's deadline is never reached.
func TestReentrantSameKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			v, err := c.Get(ctx, key)
			if err != nil {
				return "", fmt.Errorf("inner: %w", err)
			}
			return v, nil
		})
		c = newCache(t, Options[int, string]{Loader: src})
		guard, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err := c.Get(guard, 1)
		if !errors.Is(err, ErrReentrant) {
			t.Fatalf("re-entrant Get = %v; want ErrReentrant", err)
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("took %v of fake time; want an immediate error", d)
		}
	})
}

// A cycle through one call chain, 1 → 2 → 1, and a bulk loader asking for
// one of its own keys, are caught too.
func TestReentrantChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			v, err := c.Get(ctx, 3-key) // 1 asks for 2, 2 for 1
			return v + "<", err
		})
		c = newCache(t, Options[int, string]{Loader: src})
		guard, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.Get(guard, 1); !errors.Is(err, ErrReentrant) {
			t.Fatalf("cycle 1→2→1: %v; want ErrReentrant", err)
		}

		var cb *Cache[int, string]
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			if keys[0] == 9 {
				return map[int]string{9: "v9"}, nil
			}
			// Asks for its own key 2 and for key 9, which it may load.
			m, err := cb.GetMany(ctx, []int{2, 9})
			var be *BulkError[int]
			if !errors.As(err, &be) || !errors.Is(be.Errors[2], ErrReentrant) || m[9] != "v9" {
				return nil, fmt.Errorf("inner GetMany = %v, %v", m, err)
			}
			return map[int]string{1: "one", 2: "two"}, nil
		})
		cb = newCache(t, Options[int, string]{BulkLoader: bulk})
		m, err := cb.GetMany(guard, []int{1, 2})
		if err != nil || m[1] != "one" || m[2] != "two" {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if d := context.Cause(guard); d != nil {
			t.Fatalf("the guard fired: %v", d)
		}
	})
}

// A load that outlives LoadTimeout is cancelled and fails with an error
// that says so, remembered like any failure.
func TestLoadTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
		c := newCache(t, Options[int, string]{Loader: src, LoadTimeout: 5 * time.Second, ErrorTTL: time.Minute})
		start := time.Now()
		_, err := c.Get(context.Background(), 1)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 5s") {
			t.Fatalf("Get = %v; want the load timeout", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("the load ended after %v; want 5s", d)
		}
		if _, err2 := c.Get(context.Background(), 1); err2 != err {
			t.Fatalf("second Get = %v; want the remembered error", err2)
		}
	})
}

// A loader that, cancelled by LoadTimeout, returns an error of its own
// that does not wrap the context's (a driver's "i/o timeout", an RPC
// status) still fails with the load timeout's error, as LoadTimeout
// promises: it wraps context.DeadlineExceeded and the loader's error, and
// says that the load timed out.
func TestLoadTimeoutOwnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errRPC := errors.New("rpc error: code = DeadlineExceeded")
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-ctx.Done()
			return "", errRPC
		})
		c := newCache(t, Options[int, string]{Loader: src, LoadTimeout: 5 * time.Second})
		_, err := c.Get(context.Background(), 1)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, errRPC) || !strings.Contains(err.Error(), "timed out after 5s") {
			t.Fatalf("Get = %v; want the load timeout wrapping the loader's error", err)
		}
	})
}

// The TTL holds even if a refresh hangs: past it the old value is no longer
// served, and readers wait for the hung load (bounded by their contexts).
func TestHardTTLWhileRefreshHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 2 {
				select {
				case <-hang:
				case <-ctx.Done():
				}
				return "", errSource
			}
			return fmt.Sprintf("v%d", n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: 10 * time.Second, RefreshAfter: 5 * time.Second, LoadTimeout: -1})
		mustGet(t, c, 1, "v1")
		time.Sleep(6 * time.Second)
		mustGet(t, c, 1, "v1") // starts the refresh, which hangs
		time.Sleep(4 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if v, err := c.Get(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get past the TTL = %q, %v; want to wait for the hung load until the deadline", v, err)
		}
		close(hang)
		synctest.Wait()
		if n := src.total.Load(); n != 2 {
			t.Fatalf("%d loader calls; want 2", n)
		}
	})
}

// A load that outlives the loader call that started it (here a background
// reload of 2, started by 1's loader) does not count 1 as being loaded once
// 1's load is over: its own Get of 1 loads it rather than fail with
// ErrReentrant.
func TestReentrantChainSkipsFinishedLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var inner error
		var c *Cache[int, string]
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if key == 1 {
				v, err := c.Get(ctx, 2)
				return "a(" + v + ")", err
			}
			if n == 1 {
				return "b1", nil
			}
			<-gate // 2's reload, started by 1's loader
			var v string
			v, inner = c.Get(ctx, 1)
			return "b2(" + v + ")", inner
		})
		c = newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, RefreshAfter: time.Minute, ErrorTTL: time.Hour})
		mustGet(t, c, 2, "b1")
		time.Sleep(2 * time.Minute) // 2 is due for a reload
		mustGet(t, c, 1, "a(b1)")   // 1's loader reads 2: its reload starts
		synctest.Wait()
		c.Delete(1) // 1's load is over: the reload of 2 must load 1 again
		close(gate)
		synctest.Wait()
		if inner != nil {
			t.Fatalf("the reload's Get(1) = %v; want a load (nobody was loading 1)", inner)
		}
		mustGet(t, c, 2, "b2(a(b1))")
		if s := c.Stats(); s.LoadErrors != 0 {
			t.Fatalf("LoadErrors = %d; want 0", s.LoadErrors)
		}
	})
}

// A Weigher that panics or calls runtime.Goexit while a loaded value is
// stored fails the waiters with a *PanicError (Storing set), stores
// nothing, and leaves the key loadable: the process survives, and the
// key's shard is not left locked.
func TestWeigherFaultWhileStoring(t *testing.T) {
	for _, fault := range []string{"panic", "goexit"} {
		t.Run(fault, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var faults atomic.Int32
				faults.Store(1)
				gate := make(chan struct{})
				src := newSource(func(ctx context.Context, key, n int) (string, error) {
					if n == 1 {
						<-gate
					}
					return "v", nil
				})
				c := newCache(t, Options[int, string]{Loader: src, MaxWeight: 100,
					Weigher: func(k int, v string) uint32 {
						if faults.Add(-1) == 0 {
							if fault == "panic" {
								panic("weigher bug")
							}
							runtime.Goexit()
						}
						return 1
					}})
				var wg sync.WaitGroup
				errs := make([]error, 5)
				for i := range errs {
					wg.Go(func() { _, errs[i] = c.Get(context.Background(), 1) })
				}
				synctest.Wait() // all five wait for the first load
				close(gate)
				wg.Wait()
				for i, err := range errs {
					var pe *PanicError
					if !errors.As(err, &pe) || !pe.Storing || pe.Goexit != (fault == "goexit") {
						t.Fatalf("waiter %d: %v; want a *PanicError from storing (%s)", i, err, fault)
					}
					if fault == "panic" && (pe.Value != "weigher bug" || !strings.Contains(pe.Error(), "storing the loaded value panicked: weigher bug")) {
						t.Fatalf("waiter %d: %+v", i, pe)
					}
				}
				// Nothing was stored: the next Get loads again (and the
				// shard is not locked).
				mustGet(t, c, 1, "v")
				if n := src.count(1); n != 2 {
					t.Fatalf("%d loads; want 2", n)
				}
			})
		})
	}
}

// A load that Close cancels, whose loader then returns an error, counts
// as a failed load, as Stats documents.
func TestLoadErrorsCountsLoadsCancelledByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := New(Options[int, string]{Clock: bubbleClock{}, Loader: LoaderFunc[int, string](
			func(ctx context.Context, k int) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			})})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { _, err := c.Get(context.Background(), 1); done <- err }()
		synctest.Wait()
		c.Close()
		if err := <-done; !errors.Is(err, ErrClosed) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Get = %v; want ErrClosed wrapping the loader's error", err)
		}
		if s := c.Stats(); s.Loads != 1 || s.LoadErrors != 1 {
			t.Fatalf("Loads %d, LoadErrors %d; want 1 and 1", s.Loads, s.LoadErrors)
		}
	})
}

// A Weigher's Goexit while the results of a bulk load are stored fails
// every key of the call, not only the one being stored: none is left
// loading forever.
func TestWeigherGoexitInBulkLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			m := map[int]string{}
			for _, k := range keys {
				m[k] = fmt.Sprint("v", k)
			}
			return m, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk, MaxWeight: 100,
			Weigher: func(int, string) uint32 {
				if calls.Add(1) == 1 {
					runtime.Goexit()
				}
				return 1
			}})
		// A stuck key would wait out the deadline (fake time: at once).
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		m, err := c.GetMany(ctx, []int{1, 2, 3})
		var be *BulkError[int]
		if !errors.As(err, &be) || len(m) != 0 || len(be.Errors) != 3 {
			t.Fatalf("GetMany = %v, %v; want every key failed", m, err)
		}
		for k, err := range be.Errors {
			var pe *PanicError
			if !errors.As(err, &pe) || !pe.Goexit || !pe.Storing {
				t.Errorf("key %d: %v; want a *PanicError for the Goexit while storing", k, err)
			}
		}
		m, err = c.GetMany(ctx, []int{1, 2, 3})
		if err != nil || len(m) != 3 {
			t.Fatalf("GetMany after the Goexit = %v, %v", m, err)
		}
	})
}

// 1's loader reads 2, which is due for a reload: the reload starts in the
// background while 1's loader goes on. Nobody waits for that reload, so
// its loader asking for 1, still loading, is no cycle: it waits for 1's
// load rather than fail (and cache) ErrReentrant.
func TestReloadStartedByLoaderWaitsForItsStarter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := make(chan struct{})
		var inner error
		var c *Cache[int, string]
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if key == 1 {
				v, err := c.Get(ctx, 2) // at once: 2 is fresh, and due
				<-slow
				return "a(" + v + ")", err
			}
			if n == 1 {
				return "b1", nil
			}
			var v string
			v, inner = c.Get(ctx, 1) // the reload of 2 reads 1
			return "b2(" + v + ")", inner
		})
		c = newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, RefreshAfter: time.Minute, ErrorTTL: time.Hour})
		mustGet(t, c, 2, "b1")
		time.Sleep(2 * time.Minute) // 2 is due for a reload
		done := make(chan struct{})
		go func() { defer close(done); mustGet(t, c, 1, "a(b1)") }()
		synctest.Wait() // 1's loader waits; 2's reload waits for 1
		close(slow)
		<-done
		synctest.Wait()
		if inner != nil {
			t.Fatalf("the reload's Get(1) = %v; want 1's value", inner)
		}
		mustGet(t, c, 2, "b2(a(b1))")
		if s := c.Stats(); s.LoadErrors != 0 {
			t.Fatalf("LoadErrors = %d; want 0", s.LoadErrors)
		}
	})
}
