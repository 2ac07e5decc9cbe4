package loading

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Tests of a GetMany's queued loads (MaxManyLoads) when other callers join
// them, and of its refresh claims when a lookup panics.

// gatedSource is a Loader whose calls for a key block until that key's gate
// is closed; it tracks which loads are running right now.
type gatedSource struct {
	mu      sync.Mutex
	gates   map[int]chan struct{}
	running map[int]bool
}

func newGatedSource(keys ...int) *gatedSource {
	s := &gatedSource{gates: map[int]chan struct{}{}, running: map[int]bool{}}
	for _, k := range keys {
		s.gates[k] = make(chan struct{})
	}
	return s
}

func (s *gatedSource) Load(ctx context.Context, key int) (string, error) {
	s.mu.Lock()
	s.running[key] = true
	gate := s.gates[key]
	s.mu.Unlock()
	<-gate
	s.mu.Lock()
	delete(s.running, key)
	s.mu.Unlock()
	return "v", nil
}

func (s *gatedSource) runningKeys() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ks []int
	for k := range s.running {
		ks = append(ks, k)
	}
	return ks
}

// queuedGetMany starts, in a synctest bubble, a GetMany of keys on a cache
// with MaxManyLoads 1 whose Loader is gated on every key, and waits until
// it has started its first key's load; done is closed when it returns.
func queuedGetMany(t *testing.T, keys ...int) (src *gatedSource, c *Cache[int, string], done chan struct{}) {
	t.Helper()
	src = newGatedSource(keys...)
	c = newCache(t, Options[int, string]{Loader: src, MaxManyLoads: 1})
	done = make(chan struct{})
	go func() {
		defer close(done)
		c.GetMany(context.Background(), keys)
	}()
	synctest.Wait()
	if ks := src.runningKeys(); len(ks) != 1 || ks[0] != keys[0] {
		t.Fatalf("running %v after GetMany started; want only key %d", ks, keys[0])
	}
	return src, c, done
}

// release opens the gates of keys and waits for done (a GetMany's end), so
// that nothing is left running when the test ends.
func (s *gatedSource) release(done <-chan struct{}, keys ...int) {
	for _, k := range keys {
		close(s.gates[k])
	}
	<-done
}

// Documented (Options.MaxManyLoads): "MaxManyLoads bounds the Load calls
// that one GetMany without a BulkLoader has in flight at once: its other
// missing keys are loaded as those finish". A queued key that another
// caller joins is started early (so that the joiner need not wait for a
// turn); once that early load has finished, the GetMany must be back
// within its bound: the early load's end is no turn for the next queued
// key while the first is still running (it once was, and two Loads ran at
// once with MaxManyLoads 1 and no early start in flight).
func TestMaxManyLoadsHeldAfterJoinedQueuedLoadEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, c, done := queuedGetMany(t, 1, 2, 3) // key 1 loads; 2 and 3 wait
		// Another caller joins queued key 3, which starts it at once.
		joined := make(chan struct{})
		go func() {
			defer close(joined)
			c.Get(context.Background(), 3)
		}()
		synctest.Wait()
		close(src.gates[3]) // the early load ends
		<-joined
		synctest.Wait()
		ks := src.runningKeys()
		src.release(done, 1, 2)
		if len(ks) > 1 {
			t.Fatalf("after the joined key's early load ended, %v are loading at once; MaxManyLoads is 1", ks)
		}
	})
}

// Documented (Get): "A Get whose ctx has already ended starts no load (it
// still joins one in flight and reads the cache)", and (Options.
// MaxManyLoads) a GetMany's queued keys are loaded as its earlier loads
// finish. A Get whose context has already ended does not wait, so it has
// no reason to start a key that a GetMany queued (it once did, putting the
// GetMany over MaxManyLoads on behalf of a caller that returned ctx.Err()
// straight away).
func TestEndedContextGetStartsNoQueuedLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src, c, done := queuedGetMany(t, 1, 2) // key 1 loads; key 2 waits
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Get(ended, 2); err != context.Canceled {
			t.Errorf("Get with an ended context = %v; want context.Canceled", err)
		}
		synctest.Wait()
		ks := src.runningKeys()
		src.release(done, 1, 2)
		if len(ks) > 1 {
			t.Fatalf("a Get whose context had ended started queued key 2: %v load at once; MaxManyLoads is 1", ks)
		}
	})
}

// Documented (Options.Clock, and the fault model that the package's own
// clock-panic tests hold it to): a Clock's panic on a caller's goroutine
// "leaves no lock held and reaches the caller"; a refresh claim must be
// given back when a panic unwinds (cf. TestClockPanicInRefreshReleasesSlot:
// otherwise "the key is never reloaded"). And (RefreshAfter): "the Get
// that finds it due returns the value at once and starts one reload".
//
// GetMany claims the background reload of each due key as it looks the
// keys up (bulk.go: refreshing.CompareAndSwap in the lookup loop) and only
// starts those reloads after the loop (refreshMany, one key at a time
// without a BulkLoader). If a later key's lookup panics (the core's Get
// reads the Clock), or an earlier key's refresh does (refreshFlight reads
// it through the core's Peek), the claims not yet started must be given
// back; otherwise no later read reloads those keys again, and with a long
// TTL they keep being served their old value, well past RefreshAfter,
// without the source being asked again. Both once happened.
func TestGetManyPanicGivesBackRefreshClaims(t *testing.T) {
	for _, tc := range []struct {
		name  string
		point string // where the Clock panics (see stackPanicClock)
		skip  int64  // calls from there that do not panic first
		key   int    // a key whose claim the panic would have kept
	}{
		{"second lookup", "getRest", 1, 1},
		{"first refresh", "refreshFlight", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testGetManyPanicGivesBackClaim(t, tc.point, tc.skip, tc.key)
		})
	}
}

func testGetManyPanicGivesBackClaim(t *testing.T, point string, skip int64, key int) {
	clock := &stackPanicClock{}
	src := newSource(nil)
	c := Must(Options[int, string]{Clock: clock, TTL: time.Hour, RefreshAfter: time.Minute, Loader: src})
	ctx := context.Background()
	if _, err := c.GetMany(ctx, []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	clock.advance(2 * time.Minute) // both keys due for a refresh
	clock.arm(point, skip)
	p := recovered(func() { c.GetMany(ctx, []int{1, 2}) })
	clock.armed.Store(nil)
	if p == nil {
		c.Close()
		t.Fatalf("the clock did not panic")
	}
	// The key is due: the first read returns the old value and starts its
	// one background reload; the later ones find it running, or its new
	// value (which is not due).
	old, reloaded := fmt.Sprintf("v%d.1", key), fmt.Sprintf("v%d.2", key)
	if v, err := c.Get(ctx, key); v != old || err != nil {
		t.Errorf("first Get(%d) = %q, %v; want %s, nil", key, v, err, old)
	}
	for range 2 {
		if v, err := c.Get(ctx, key); (v != old && v != reloaded) || err != nil {
			t.Errorf("Get(%d) = %q, %v; want %s or %s, nil", key, v, err, old, reloaded)
		}
	}
	c.Close() // waits for any reload that was launched
	if n := src.count(key); n != 2 {
		t.Fatalf("key %d loaded %d times after reads past RefreshAfter; want 2 (its reload claim, taken by the GetMany that panicked, must be given back)", key, n)
	}
}
