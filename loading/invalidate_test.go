package loading

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// overtaken starts a load of key 1 held at a gate, runs op while it is in
// flight, releases it and checks that its waiter still got the loaded value.
func overtaken(t *testing.T, op func(c *Cache[int, string])) (*Cache[int, string], *source) {
	gate := make(chan struct{})
	src := newSource(func(ctx context.Context, key, n int) (string, error) {
		if n == 1 {
			<-gate
		}
		return fmt.Sprintf("v%d.%d", key, n), nil
	})
	c := newCache(t, Options[int, string]{Loader: src})
	got := make(chan string, 1)
	go func() {
		v, _ := c.Get(context.Background(), 1)
		got <- v
	}()
	synctest.Wait()
	op(c)
	close(gate)
	if v := <-got; v != "v1.1" {
		t.Fatalf("the waiter got %q; want the loaded value", v)
	}
	synctest.Wait()
	return c, src
}

// Delete during a load: the waiter gets the value, the cache does not keep
// it, and the next Get loads again.
func TestDeleteDuringLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, src := overtaken(t, func(c *Cache[int, string]) { c.Delete(1) })
		if _, ok := c.core.Peek(1); ok {
			t.Fatal("the overtaken load's result was cached")
		}
		mustGet(t, c, 1, "v1.2")
		if n := src.count(1); n != 2 {
			t.Fatalf("%d loads; want 2", n)
		}
	})
}

// A Get after the Delete, while the first load still runs, starts a new
// load rather than joining the overtaken one.
func TestGetAfterDeleteDuringLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c *Cache[int, string]
		var second string
		c, src := overtaken(t, func(c *Cache[int, string]) {
			c.Delete(1)
			var err error
			second, err = c.Get(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
		})
		if second != "v1.2" {
			t.Fatalf("the Get after Delete got %q; want a new load's value", second)
		}
		mustGet(t, c, 1, "v1.2") // the new load's value stays; the old one never replaced it
		if n := src.count(1); n != 2 {
			t.Fatalf("%d loads; want 2", n)
		}
	})
}

// Set during a load wins over the load's result.
func TestSetDuringLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, src := overtaken(t, func(c *Cache[int, string]) { c.Set(1, "set") })
		mustGet(t, c, 1, "set")
		if n := src.count(1); n != 1 {
			t.Fatalf("%d loads; want 1", n)
		}
	})
}

// InvalidateAll during a load: not cached either; InvalidateAll empties the
// cache.
func TestInvalidateAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, src := overtaken(t, func(c *Cache[int, string]) {
			c.Set(2, "two")
			c.InvalidateAll()
		})
		if _, ok := c.core.Peek(1); ok {
			t.Fatal("the load overtaken by InvalidateAll was cached")
		}
		if n := c.Stats().Core.Entries; n != 0 {
			t.Fatalf("%d entries after InvalidateAll", n)
		}
		mustGet(t, c, 2, "v2.1")
		mustGet(t, c, 1, "v1.2")
		if n := src.total.Load(); n != 3 {
			t.Fatalf("%d loads; want 3", n)
		}
	})
}

// The cache is checked again before a load starts: a value stored between a
// caller's miss and its flight is returned without loading.
func TestRecheckBeforeLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src})
		c.beforeFlight = func(key int) { c.Set(key, "stored meanwhile") }
		mustGet(t, c, 1, "stored meanwhile")
		m, err := c.GetMany(context.Background(), []int{2, 3})
		if err != nil || m[2] != "stored meanwhile" || m[3] != "stored meanwhile" {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if n := src.total.Load(); n != 0 {
			t.Fatalf("%d loads; want 0", n)
		}
	})
}

// ExpireAll with MaxStale: reads keep getting the old values, marked stale,
// without waiting, while each key is reloaded once in the background.
func TestExpireAllServesStaleWhileRefreshing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n > 1 {
				<-gate
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: 10 * time.Minute})
		keys := keyRange(1, 10)
		for _, k := range keys {
			mustGet(t, c, k, fmt.Sprintf("v%d.1", k))
		}
		time.Sleep(time.Minute)
		c.ExpireAll()
		start := time.Now()
		for range 3 { // three rounds of reads: still one reload per key
			for _, k := range keys {
				v, err := c.Get(context.Background(), k)
				if v != fmt.Sprintf("v%d.1", k) || !errors.Is(err, ErrStale) {
					t.Fatalf("Get(%d) after ExpireAll = %q, %v; want the old value, stale", k, v, err)
				}
			}
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("reads waited %v", d)
		}
		synctest.Wait()
		for _, k := range keys {
			if n := src.count(k); n != 2 {
				t.Fatalf("key %d loaded %d times; want 2", k, n)
			}
		}
		close(gate)
		synctest.Wait()
		for _, k := range keys {
			mustGet(t, c, k, fmt.Sprintf("v%d.2", k))
		}
		if s := c.Stats(); s.Refreshes != 10 || s.StaleHits != 30 {
			t.Fatalf("stats %+v; want 10 refreshes, 30 stale hits", s)
		}
	})
}

// ExpireAll's stale window is MaxStale from the ExpireAll; a load in flight
// during ExpireAll stores its result as already stale; without MaxStale the
// next Get waits for a load; remembered errors are forgotten.
func TestExpireAllDetails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			switch {
			case key == 3 && n == 1:
				return "", ErrNotFound
			case key == 1 && n == 2:
				<-gate
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, MaxStale: time.Minute})
		mustGet(t, c, 1, "v1.1")
		if _, err := c.Get(context.Background(), 3); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		c.ExpireAll()
		// Key 1: stale now; its reload hangs at the gate.
		if _, err := c.Get(context.Background(), 1); !errors.Is(err, ErrStale) {
			t.Fatalf("key 1 after ExpireAll: %v", err)
		}
		// Key 3's not-found answer is forgotten: Get loads it.
		mustGet(t, c, 3, "v3.2")
		time.Sleep(time.Minute)
		// Past MaxStale from the ExpireAll: key 1 no longer served; the
		// reader joins the hung reload.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if v, err := c.Get(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("key 1 past MaxStale after ExpireAll = %q, %v; want to wait", v, err)
		}
		close(gate)
		synctest.Wait()
		mustGet(t, c, 1, "v1.2")

		// A load in flight during ExpireAll stores a stale result.
		gate2 := make(chan struct{})
		src2 := newSource(func(ctx context.Context, key, n int) (string, error) {
			<-gate2
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c2 := newCache(t, Options[int, string]{Loader: src2, TTL: time.Hour, MaxStale: time.Minute})
		done := make(chan struct{})
		go func() {
			defer close(done)
			mustGet(t, c2, 5, "v5.1")
		}()
		synctest.Wait()
		c2.ExpireAll()
		close(gate2)
		<-done
		if v, err := c2.Get(context.Background(), 5); v != "v5.1" || !errors.Is(err, ErrStale) {
			t.Fatalf("result of a load in flight during ExpireAll = %q, %v; want stale", v, err)
		}

		// Without MaxStale, ExpireAll makes the next Get wait for a load.
		src3 := newSource(func(ctx context.Context, key, n int) (string, error) {
			time.Sleep(time.Second)
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c3 := newCache(t, Options[int, string]{Loader: src3, TTL: time.Hour})
		mustGet(t, c3, 1, "v1.1")
		c3.ExpireAll()
		start := time.Now()
		mustGet(t, c3, 1, "v1.2")
		if d := time.Since(start); d != time.Second {
			t.Fatalf("Get after ExpireAll without MaxStale took %v; want the load's 1s", d)
		}
	})
}

// Set and Delete race with loads of the same keys from many goroutines: the
// race detector watches, and every Get returns a value some writer or load
// produced.
func TestConcurrentWritesAndLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			time.Sleep(time.Millisecond)
			return fmt.Sprintf("load%d", key), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: 50 * time.Millisecond, RefreshAfter: 20 * time.Millisecond, MaxStale: 20 * time.Millisecond})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 300 {
					k := (g + i) % 5
					switch i % 7 {
					case 0:
						c.Delete(k)
					case 1:
						c.Set(k, fmt.Sprintf("set%d", k))
					case 2:
						if g == 0 && i%70 == 2 {
							c.ExpireAll()
						}
					default:
						v, err := c.Get(context.Background(), k)
						if err != nil && !errors.Is(err, ErrStale) {
							t.Errorf("Get(%d): %v", k, err)
						}
						if v != fmt.Sprintf("load%d", k) && v != fmt.Sprintf("set%d", k) {
							t.Errorf("Get(%d) = %q", k, v)
						}
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
	})
}

// A caller whose context has already ended starts no load, but may still
// join one in flight or read the cache.
func TestCancelledCallerStartsNoLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Get(ctx, 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("Get = %v; want context.Canceled", err)
		}
		m, err := c.GetMany(ctx, []int{1, 2})
		var be *BulkError[int]
		if len(m) != 0 || !errors.As(err, &be) || !errors.Is(be.Errors[2], context.Canceled) {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if n := src.total.Load(); n != 0 {
			t.Fatalf("%d loads for a cancelled caller", n)
		}
		mustGet(t, c, 1, "v1.1")
		if v, err := c.Get(ctx, 1); v != "v1.1" || err != nil {
			t.Fatalf("cached Get with a cancelled context = %q, %v", v, err)
		}
	})
}

// stepClock is a manual clock, safe for concurrent use.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// A background reload registered while InvalidateAll runs (after it passed
// the key's shard, before it cleared the core) that then fails does not
// keep the invalidated value for stale-if-error: after InvalidateAll has
// returned, Get never serves a value it removed. (A manual clock, not
// synctest, which cannot wait for goroutines blocked on a mutex.)
func TestInvalidateAllBeatsFailedReload(t *testing.T) {
	clk := &stepClock{t: time.Unix(1000, 0)}
	gate := make(chan struct{})
	entered := make(chan struct{})
	var n int
	var mu sync.Mutex
	c, err := New(Options[int, string]{Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
		mu.Lock()
		n++
		m := n
		mu.Unlock()
		if m == 1 {
			return "old", nil
		}
		close(entered)
		<-gate
		return "", errors.New("source down")
	}), TTL: time.Hour, RefreshAfter: time.Minute, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	last := &c.shards[len(c.shards)-1]
	key := 0
	for c.shard(key) == last {
		key++
	}
	// A marker flight in key's shard, for another key: InvalidateAll takes
	// it out when it has passed that shard.
	marker := key + 1
	for c.shard(marker) != c.shard(key) {
		marker++
	}
	ksh := c.shard(key)
	ksh.mu.Lock()
	ksh.flights[marker] = &flight[int, string]{key: marker, sh: ksh}
	ksh.mu.Unlock()

	mustGet(t, c, key, "old")
	clk.add(2 * time.Minute) // due for a reload

	last.mu.Lock() // InvalidateAll stops at the last shard, before core.Clear
	invDone := make(chan struct{})
	go func() { defer close(invDone); c.InvalidateAll() }()
	for {
		ksh.mu.Lock()
		passed := ksh.flights[marker] == nil
		ksh.mu.Unlock()
		if passed {
			break
		}
		runtime.Gosched()
	}
	mustGet(t, c, key, "old") // concurrent with InvalidateAll; starts a reload
	<-entered                 // the reload is registered and running
	last.mu.Unlock()
	<-invDone // InvalidateAll has returned
	close(gate)
	for { // until the reload's failure is stored
		if r, ok := c.core.Peek(key); ok && r.err != nil {
			break
		}
		runtime.Gosched()
	}
	v, err := c.Get(context.Background(), key)
	if err == nil && v == "old" {
		t.Fatalf("after InvalidateAll returned: Get = %q, %v (the removed value, fresh); want a load", v, err)
	}
}
