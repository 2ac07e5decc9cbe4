package loading

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit"
)

// A background reload that failed while InvalidateAll ran could store the
// invalidated value (kept for stale-if-error) after InvalidateAll had
// cleared the core, so a Get after InvalidateAll returned served the
// removed value as fresh.
//
// The reload registers after InvalidateAll has passed the key's shard and
// checks that its previous record is still current before InvalidateAll
// clears the core; the record is written after the clear. The Weigher,
// which runs inside that write, holds it there so that the interleaving is
// deterministic; without it the window is the few instructions between the
// check and the write (a stress run with Delete/Set/InvalidateAll and a
// failing source hit it within seconds).
func TestInvalidateAllClearRacesFailedReload(t *testing.T) {
	clk := &stepClock{t: time.Unix(1000, 0)}
	c, w := newFailingReloads(t, clk)
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
	w.armed.Store(true)
	mustGet(t, c, key, "old") // concurrent with InvalidateAll; starts a reload, which fails
	<-w.entered               // the failure's record (keeping "old") is being written
	last.mu.Unlock()
	<-invDone // InvalidateAll has cleared the core and returned
	close(w.release)
	c.loads.Wait() // the reload has stored its failure
	v, err := c.Get(context.Background(), key)
	if err == nil && v == "old" {
		t.Fatalf("after InvalidateAll returned: Get = %q, %v (the removed value, fresh); want a load", v, err)
	}
}

// weighHold holds the first Weigher call after armed is set (inside the
// store of a load's record) until release is closed.
type weighHold struct {
	armed   atomic.Bool
	entered chan struct{} // closed when the held call begins
	release chan struct{}
}

// newFailingReloads returns a cache on clk whose loader answers "old" once
// and fails after that (TTL 1h, RefreshAfter 1m, MaxStale 1h: a failed
// reload keeps "old" for stale-if-error), and the hold on its Weigher.
func newFailingReloads(t *testing.T, clk cachekit.Clock) (*Cache[int, string], *weighHold) {
	t.Helper()
	w := &weighHold{entered: make(chan struct{}), release: make(chan struct{})}
	var calls atomic.Int32
	c, err := New(Options[int, string]{
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
			if calls.Add(1) == 1 {
				return "old", nil
			}
			return "", errors.New("source down")
		}),
		TTL:          time.Hour,
		RefreshAfter: time.Minute,
		MaxStale:     time.Hour,
		MaxWeight:    1000,
		Weigher: func(key int, v string) uint32 {
			if w.armed.CompareAndSwap(true, false) {
				close(w.entered)
				<-w.release
			}
			return 1
		},
		Clock: clk,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}
