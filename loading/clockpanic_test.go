package loading

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// A Get that finds the cache closed when it launches its load fails the
// load's flight with ErrClosed. Nothing is stored after Close, so that
// needs no time: a Clock that panics there (the panic recovered by the
// caller) must not leave the flight in the table, unfinished, for every
// caller that joined it to wait for.
func TestLaunchAfterCloseClockPanic(t *testing.T) {
	clock := &stackPanicClock{}
	c := Must(Options[int, string]{Clock: clock, TTL: time.Minute, Loader: LoaderFunc[int, string](
		func(ctx context.Context, key int) (string, error) { return "v", nil })})
	c.beforeFlight = func(int) {
		c.Close()
		clock.arm("loading.(*Cache[...]).launch(", 0)
	}
	var err error
	p := recovered(func() { _, err = c.Get(context.Background(), 1) })
	c.beforeFlight = nil
	clock.armed.Store(nil)
	if !shardUnlocked(c, 1) {
		t.Fatalf("key 1's shard is locked after Get (panic %v)", p)
	}
	if c.shard(1).flights[1] != nil {
		t.Fatalf("the flight launched after Close is left in the table, unfinished, after the Clock's panic (%v)", p)
	}
	if p != nil || err == nil {
		t.Fatalf("Get after Close = %v, panic %v; want ErrClosed", err, p)
	}
}

// A Prober that calls runtime.Goexit fails the key's flight as the Get's
// goroutine unwinds; that must not depend on the Clock (nothing is
// stored), or a Clock that panics there leaves the flight in the table
// for good.
func TestProbeGoexitClockPanic(t *testing.T) {
	clock := &stackPanicClock{}
	c := Must(Options[int, string]{Clock: clock, TTL: time.Minute,
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) { return "loaded", nil }),
		Probe: probeFunc(func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
			clock.arm("loading.(*Cache[...]).runProbe.func", 0)
			runtime.Goexit()
			return nil, "", 0, false
		})})
	defer c.Close()
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		c.Get(context.Background(), 1)
	}()
	p := <-done
	clock.armed.Store(nil)
	if !shardUnlocked(c, 1) {
		t.Fatalf("key 1's shard is locked after the Prober's Goexit (panic %v)", p)
	}
	if c.shard(1).flights[1] != nil {
		t.Fatalf("the flight of a Prober that called runtime.Goexit is left in the table, unfinished, after the Clock's panic (%v)", p)
	}
}

// A found probe whose flight was overtaken (here by a Set from the Prober
// itself) stores nothing; finishing it looks the key's record up to let
// its reload be claimed again, which reads the Clock. A Clock that panics
// there, recovered by the Get's caller, must not leave the key's shard
// locked (every later Get, Set or Delete of its keys would hang) nor the
// flight's waiters asleep.
func TestDeliverClockPanicUnlocksShard(t *testing.T) {
	clock := &stackPanicClock{}
	var c *Cache[int, string]
	c = Must(Options[int, string]{Clock: clock, TTL: time.Minute,
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) { return "loaded", nil }),
		Probe: probeFunc(func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
			c.Set(key, "set") // overtakes the probe's flight
			clock.arm("loading.(*Cache[...]).deliver(", 0)
			return nil, "probed", -1, true
		})})
	defer c.Close()
	p := recovered(func() { c.Get(context.Background(), 1) })
	clock.armed.Store(nil)
	if p == nil {
		t.Fatalf("the clock did not panic")
	}
	if !shardUnlocked(c, 1) {
		t.Fatalf("key 1's shard is still locked after the Clock's panic (%v) in deliver", p)
	}
	if v, err := c.Get(context.Background(), 1); v != "set" || err != nil {
		t.Fatalf("Get after the panic = %q, %v; want the value Set", v, err)
	}
}

// The same with a caller waiting for the flight: it must be woken with
// the flight's result.
func TestDeliverClockPanicWakesWaiter(t *testing.T) {
	clock := &stackPanicClock{}
	var c *Cache[int, string]
	joined := make(chan struct{})
	c = Must(Options[int, string]{Clock: clock, TTL: time.Minute,
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) { return "loaded", nil }),
		Probe: probeFunc(func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
			// A second caller joins the probe's flight.
			go func() {
				v, err := c.Get(context.Background(), 1)
				if v != "probed" || err != nil {
					t.Errorf("joined Get = %q, %v; want the probe's value", v, err)
				}
				close(joined)
			}()
			for c.stats.shared.Load() == 0 {
				runtime.Gosched()
			}
			c.Set(key, "set") // overtakes the probe's flight
			clock.arm("loading.(*Cache[...]).deliver(", 0)
			return nil, "probed", -1, true
		})})
	defer c.Close()
	p := recovered(func() { c.Get(context.Background(), 1) })
	clock.armed.Store(nil)
	if p == nil {
		t.Fatalf("the clock did not panic")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a deadlock guard only
	defer cancel()
	select {
	case <-joined:
	case <-ctx.Done():
		t.Fatalf("the caller that joined the flight was not woken after the Clock's panic (%v) in deliver", p)
	}
}
