package loading

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

type probeKey struct{}

// probeFunc adapts a function to Prober.
type probeFunc func(ctx context.Context, key int) (context.Context, string, time.Duration, bool)

func (f probeFunc) Probe(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
	return f(ctx, key)
}

// A Prober answers a miss on the caller's goroutine: found values are
// stored (with their TTL bound) without a loader call; otherwise the
// loader runs with the context the probe returned; callers that miss
// meanwhile share the one probe; Delete overtakes a probe like a load.
func TestProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		probes := map[int]int{}
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if ctx.Value(probeKey{}) != key {
				return "", errors.New("the probe's context did not reach the loader")
			}
			return "loaded", nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Minute, Probe: probeFunc(
			func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
				mu.Lock()
				probes[key]++
				mu.Unlock()
				switch key {
				case 1: // found, for at most 10s
					return nil, "probed", 10 * time.Second, true
				case 2: // found, no bound
					return nil, "probed", -1, true
				case 3: // slow, found
					<-gate
					return nil, "probed", -1, true
				case 4:
					panic("boom")
				}
				return context.WithValue(ctx, probeKey{}, key), "", 0, false
			})})

		mustGet(t, c, 1, "probed")
		mustGet(t, c, 2, "probed")
		mustGet(t, c, 5, "loaded")
		if _, err := c.Get(context.Background(), 4); err == nil || src.count(4) != 1 {
			t.Fatalf("a panicking probe: err %v, %d loads; want the loader called (it fails: no probe context)", err, src.count(4))
		}
		if s := c.Stats(); s.Loads != 2 {
			t.Fatalf("%d loads, want 2 (keys 5 and 4)", s.Loads)
		}
		time.Sleep(11 * time.Second)
		mustGet(t, c, 2, "probed") // unbounded: still fresh
		mustGet(t, c, 1, "probed") // bounded to 10s: probed again
		mu.Lock()
		if probes[1] != 2 || probes[2] != 1 {
			t.Fatalf("probes %v: want key 1 twice, key 2 once", probes)
		}
		mu.Unlock()

		// Callers share one probe in flight.
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mustGet(t, c, 3, "probed")
			}()
		}
		synctest.Wait()
		close(gate)
		wg.Wait()
		mu.Lock()
		if probes[3] != 1 {
			t.Fatalf("key 3 probed %d times by 10 callers, want 1", probes[3])
		}
		mu.Unlock()
	})
}

// A Delete while a probe runs wins: the probe's value goes to its caller
// but is not stored.
func TestProbeOvertakenByDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		c := newCache(t, Options[int, string]{Loader: newSource(nil), Probe: probeFunc(
			func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
				<-gate
				return nil, "old", -1, true
			})})
		done := make(chan struct{})
		go func() {
			defer close(done)
			mustGet(t, c, 1, "old")
		}()
		synctest.Wait()
		c.Delete(1)
		close(gate)
		<-done
		c.probe = nil
		mustGet(t, c, 1, "v1.1") // loaded: the probe's value was not stored
	})
}

// A Prober that calls runtime.Goexit ends its caller's Get, which cannot
// load; the key's other callers get a *PanicError instead of waiting for
// a load nobody runs, and the next Get loads.
func TestProbeGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		first := true
		src := newSource(nil)
		c := newCache(t, Options[int, string]{Loader: src, Probe: probeFunc(
			func(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
				if first {
					first = false
					<-gate
					runtime.Goexit()
				}
				return nil, "", 0, false
			})})
		go c.Get(context.Background(), 1) // ends in the Prober's Goexit
		synctest.Wait()
		waiter := make(chan error, 1)
		go func() { _, err := c.Get(context.Background(), 1); waiter <- err }()
		synctest.Wait()
		close(gate)
		var pe *PanicError
		if err := <-waiter; !errors.As(err, &pe) || !pe.Goexit {
			t.Fatalf("the waiter got %v; want a *PanicError for the Goexit", err)
		}
		if _, err := c.Get(context.Background(), 1); err != nil {
			t.Fatalf("Get after the Goexit: %v", err)
		}
		if n := src.count(1); n != 1 {
			t.Fatalf("%d loads; want 1", n)
		}
	})
}
