package loading

import (
	"bytes"
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// stackPanicClock is a manual clock whose Now panics once, when armed, in
// a call made from a function whose name appears in the caller's stack
// (so a test can aim the panic at one clock read among many): in the
// skip+1st such call.
type stackPanicClock struct {
	now   atomic.Int64
	armed atomic.Pointer[string]
	skip  atomic.Int64
}

func (p *stackPanicClock) Now() time.Time {
	if at := p.armed.Load(); at != nil {
		buf := make([]byte, 64<<10)
		if bytes.Contains(buf[:runtime.Stack(buf, false)], []byte(*at)) && p.skip.Add(-1) < 0 &&
			p.armed.CompareAndSwap(at, nil) {
			panic("clock failed")
		}
	}
	return time.Unix(0, p.now.Load())
}

// arm makes the skip+1st read from a stack naming in panic.
func (p *stackPanicClock) arm(in string, skip int64) {
	p.skip.Store(skip)
	p.armed.Store(&in)
}

func (p *stackPanicClock) advance(d time.Duration) { p.now.Add(int64(d)) }

// recovered calls fn and returns what it panicked with, if anything.
func recovered(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// shardUnlocked reports whether key's shard of the load table is unlocked.
func shardUnlocked[V any](c *Cache[int, V], key int) bool {
	sh := c.shard(key)
	if !sh.mu.TryLock() {
		return false
	}
	sh.mu.Unlock()
	return true
}

// A Clock that panics while a Get (or GetMany) looks the key up again
// under its shard's lock, the panic recovered by the caller (as net/http
// recovers a handler's): the shard must not stay locked, or every later
// Get of its keys waits forever.
func TestClockPanicInRecheckReleasesShard(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(map[bool]string{false: "Get", true: "GetMany"}[many], func(t *testing.T) { testClockPanicInRecheck(t, many) })
	}
}

func testClockPanicInRecheck(t *testing.T, many bool) {
	clock := &stackPanicClock{}
	c := Must(Options[int, string]{Clock: clock, TTL: time.Minute, Loader: LoaderFunc[int, string](
		func(ctx context.Context, key int) (string, error) { return "v", nil })})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Get(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.ExpireAll() // the record stays, unusable: the second look reads the clock
	clock.advance(time.Second)
	c.beforeFlight = func(int) { clock.arm("loading.(*Cache[...]).", 0) }
	p := recovered(func() {
		if many {
			c.GetMany(ctx, []int{1})
		} else {
			c.Get(ctx, 1)
		}
	})
	c.beforeFlight = nil
	if p == nil {
		t.Fatalf("the clock did not panic")
	}
	if !shardUnlocked(c, 1) {
		t.Fatalf("key 1's shard is still locked after the Clock's panic")
	}
	if v, err := c.Get(ctx, 1); v != "v" || err != nil {
		t.Fatalf("Get after the panic = %q, %v", v, err)
	}
}

// A Clock that panics while a Get (or a GetMany with a BulkLoader)
// registers a background reload, recovered by the caller: the reload's
// slot and the record's claim must be given back, and reloads registered
// before the panic launched, or the slot stays taken (with
// MaxConcurrentRefreshes 1, no reload ever runs again) and the key is
// never reloaded.
func TestClockPanicInRefreshReleasesSlot(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(map[bool]string{false: "Get", true: "GetManyBulk"}[many], func(t *testing.T) { testClockPanicInRefresh(t, many) })
	}
}

func testClockPanicInRefresh(t *testing.T, many bool) {
	clock := &stackPanicClock{}
	loads := make(chan int, 16)
	load := func(key int) string { loads <- key; return "v" }
	opts := Options[int, string]{Clock: clock, TTL: time.Minute, RefreshAfter: 30 * time.Second,
		MaxConcurrentRefreshes: 1,
		Loader:                 LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) { return load(key), nil })}
	if many {
		opts.BulkLoader = BulkLoaderFunc[int, string](func(ctx context.Context, keys []int) (map[int]string, error) {
			m := map[int]string{}
			for _, k := range keys {
				m[k] = load(k)
			}
			return m, nil
		})
	}
	c := Must(opts)
	ctx := context.Background()
	if _, err := c.GetMany(ctx, []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	<-loads
	<-loads
	clock.advance(31 * time.Second) // both due
	// With a BulkLoader the panic comes with the second key's
	// registration, after the first key's reload was registered.
	clock.arm("refreshFlight", map[bool]int64{false: 0, true: 1}[many])
	p := recovered(func() {
		if many {
			c.GetMany(ctx, []int{1, 2})
		} else {
			c.Get(ctx, 1)
		}
	})
	if p == nil {
		t.Fatalf("the clock did not panic")
	}
	c.Close() // waits for any reload launched
	close(loads)
	reloaded := 0
	for range loads {
		reloaded++
	}
	if many && reloaded != 1 {
		t.Fatalf("%d reloads ran, want 1 (key 1's, registered before the panic)", reloaded)
	}
	if n := len(c.slots); n != 0 {
		t.Fatalf("%d background slots still taken after the Clock's panic (%d reloads ran)", n, reloaded)
	}
	for _, k := range []int{1, 2} {
		if c.shard(k).flights[k] != nil {
			t.Fatalf("key %d's reload registered but never launched (%d reloads ran)", k, reloaded)
		}
		if r, ok := c.core.Peek(k); ok && r.refreshing.Load() {
			t.Fatalf("key %d's reload still claimed after the Clock's panic (%d reloads ran)", k, reloaded)
		}
	}
}

// A Clock that panics when a Prober's found value is about to be stored:
// the key's flight must not stay in the table with nobody to finish it
// (every later Get of the key would join it and wait until its context
// ends). The panic counts as the probe's: the key is loaded instead.
func TestClockPanicAfterProbeFound(t *testing.T) {
	clock := &stackPanicClock{}
	c := Must(Options[int, string]{Clock: clock, TTL: time.Minute,
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) { return "loaded", nil }),
		Probe: probeFunc(func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
			clock.arm("loading.(*Cache[...]).load(", 0)
			return nil, "probed", -1, true
		})})
	defer c.Close()
	var v string
	var err error
	p := recovered(func() { v, err = c.Get(context.Background(), 1) })
	sh := c.shard(1)
	sh.mu.Lock()
	left := sh.flights[1] != nil
	sh.mu.Unlock()
	if left {
		t.Fatalf("the key's flight is left in the table after the Clock's panic (%v), with nobody to finish it", p)
	}
	if p != nil || v != "loaded" || err != nil {
		t.Fatalf("Get = %q, %v, panic %v; want the key loaded", v, err, p)
	}
}

// A GetMany that registers a load for its first missing key, then has the
// Clock panic on a later key (caller's goroutine, recovered by the caller,
// as net/http recovers a handler's): the first key's flight must not stay
// in the table unlaunched, or every later Get of that key joins it and
// waits until its own context ends.
func TestClockPanicInGetManyLaunchesEarlierLoads(t *testing.T) {
	clock := &stackPanicClock{}
	c := Must(Options[int, string]{Clock: clock, TTL: time.Minute, Loader: LoaderFunc[int, string](
		func(ctx context.Context, key int) (string, error) { return "v", nil })})
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Get(ctx, 2); err != nil {
		t.Fatal(err)
	}
	c.ExpireAll() // key 2's record stays, unusable: its second look reads the clock
	clock.advance(time.Second)
	c.beforeFlight = func(k int) {
		if k == 2 {
			clock.arm("loading.(*Cache[...]).", 0)
		}
	}
	p := recovered(func() { c.GetMany(ctx, []int{1, 2}) })
	c.beforeFlight = nil
	clock.armed.Store(nil)
	if p == nil {
		t.Fatalf("the clock did not panic")
	}
	// The deadline only bounds the failure: launched, the load ends at once.
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := c.Get(tctx, 1)
	if v != "v" || err != nil {
		t.Fatalf("after the Clock's panic (%v): Get(1) = %q, %v; want the key loaded (its load, registered by the GetMany, must have been launched)", p, v, err)
	}
}
