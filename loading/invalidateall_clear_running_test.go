package loading

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedClock is a manual clock whose Now, once armed, blocks the first
// call made from inside InvalidateAll (the core's Clear reads the clock
// before it empties the index) until released.
type gatedClock struct {
	mu      sync.Mutex
	t       time.Time
	armed   atomic.Bool
	entered chan struct{}
	gate    chan struct{}
}

func (c *gatedClock) Now() time.Time {
	if c.armed.Load() {
		buf := make([]byte, 8<<10)
		buf = buf[:runtime.Stack(buf, false)]
		if strings.Contains(string(buf), ").InvalidateAll(") && c.armed.CompareAndSwap(true, false) {
			close(c.entered)
			<-c.gate
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *gatedClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// InvalidateAll counted its clear before running it: a failed reload that
// read the already-incremented count, found its previous value still current
// (the clear had not run yet) and wrote its copy after the clear saw no
// change, and kept the removed value, served as fresh after InvalidateAll
// returned.
func TestInvalidateAllClearRunningAtCheck(t *testing.T) {
	clk := &gatedClock{t: time.Unix(1000, 0), entered: make(chan struct{}), gate: make(chan struct{})}
	c, w := newFailingReloads(t, clk)
	defer c.Close()
	const key = 1
	mustGet(t, c, key, "old")
	clk.add(2 * time.Minute) // due for a reload

	// InvalidateAll has passed every shard and counted its clear; it
	// stops inside the core's Clear, before the index is emptied.
	clk.armed.Store(true)
	invDone := make(chan struct{})
	go func() { defer close(invDone); c.InvalidateAll() }()
	<-clk.entered

	// A read now starts a reload (registered after InvalidateAll passed
	// the shard), which fails: its store reads the count (already
	// incremented), finds "old" still current, and starts writing the copy.
	w.armed.Store(true)
	mustGet(t, c, key, "old") // concurrent with InvalidateAll
	<-w.entered

	// The clear runs to its end and InvalidateAll returns; then the
	// copy is written.
	close(clk.gate)
	<-invDone
	close(w.release)
	c.loads.Wait()

	v, err := c.Get(context.Background(), key)
	if err == nil && v == "old" {
		t.Fatalf("after InvalidateAll returned: Get = %q, %v (the removed value, fresh); want a load", v, err)
	}
}
