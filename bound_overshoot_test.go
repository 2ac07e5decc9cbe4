package cachekit_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit"
)

// gateClock is a Clock whose Now, once armed, blocks its first caller until
// released. Every maintenance pass reads the clock under the maintenance
// lock, so a pass that reads it keeps that lock, as a slow pass (or one
// preempted) would: the interleavings below happen at that moment without
// any timing luck.
type gateClock struct {
	t       time.Time
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func newGateClock() *gateClock {
	return &gateClock{t: time.Unix(1e9, 0), entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gateClock) Now() time.Time {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
	}
	return g.t
}

// holdMaintenance fills c to max entries, then has another goroutine run a
// pass (Stats) that keeps the maintenance lock until the returned function
// is called; that function waits for the pass to end.
func holdMaintenance(c *cachekit.Cache[int, int], clk *gateClock, max int) (release func()) {
	for i := range max {
		c.Set(i, i)
	}
	c.Stats()
	clk.armed.Store(true)
	done := make(chan struct{})
	go func() { defer close(done); c.Stats() }()
	<-clk.entered
	return func() { close(clk.release); <-done }
}

// peakLen polls c.Len until it reaches target or a bounded number of yields
// has passed (no clock involved), and returns the largest value seen.
func peakLen(c *cachekit.Cache[int, int], target int) int {
	peak := 0
	for i := 0; i < 1_000_000 && peak < target; i++ {
		peak = max(peak, c.Len())
		runtime.Gosched()
	}
	return peak
}

// README ("Bounds") used to say that concurrent writes push the index past
// MaxEntries by at most the write queue's capacity. A Set puts its entry in
// the index before it queues the write record, and a writer that finds the
// queue full waits with its entry in the index: while a pass holds the
// maintenance lock, 200 writers on a cache of 1,000 (queue 64) put it at
// 1,200. README now counts one entry per waiting writer; this checks that
// bound (a Clock that blocks once holds one pass at a deterministic point).
func TestOvershootDuringPassConcurrentWriters(t *testing.T) {
	const max, writers = 1000, 200
	// writeQueueSize(1000, any GOMAXPROCS): at most max(64, 1000/16) = 64,
	// a power of two already; each writer waiting for room adds its entry.
	const limit = max + 64 + writers
	clk := newGateClock()
	c := cachekit.Must(cachekit.Options[int, int]{MaxEntries: max, Clock: clk})
	c.Close() // no background passes: maintenance runs on the test's goroutines only
	release := holdMaintenance(c, clk, max)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Set(max+g, g)
		}()
	}
	peak := peakLen(c, max+writers)
	release()
	wg.Wait()
	if c.Stats(); c.Len() > max {
		t.Errorf("after the writes were applied: Len %d > %d", c.Len(), max)
	}
	if peak > limit {
		t.Errorf("while one maintenance pass ran, %d concurrent Sets of new keys put the index at %d entries, "+
			"%d over MaxEntries %d; README bounds it by the write queue's capacity (64) plus one per writer: %d",
			writers, peak, peak-max, max, limit)
	}
	t.Logf("peak %d entries for MaxEntries %d", peak, max)
}

// README used to say one writer goroutine pushes the index past MaxEntries
// by at most MaxEntries/16 (at most 32): that holds only when the writer
// runs every pass itself. While another goroutine's pass (a reader's, the
// background one's) holds the lock, the writer's batch-end TryLock fails and
// it goes on until the queue is full: 1,065 for 1,000 entries.
func TestOvershootDuringPassOneWriter(t *testing.T) {
	const max = 1000
	const limit = max + 64 + 1 // the queue's capacity, and the entry of the writer waiting for room
	clk := newGateClock()
	c := cachekit.Must(cachekit.Options[int, int]{MaxEntries: max, Clock: clk})
	c.Close()
	release := holdMaintenance(c, clk, max) // a pass, not a write
	writerDone := make(chan struct{})
	go func() { // the only writer
		defer close(writerDone)
		for i := range 100 {
			c.Set(max+i, i)
		}
	}()
	peak := peakLen(c, max+64+1) // the queue full, and the writer's next entry
	release()
	<-writerDone
	if peak > limit {
		t.Errorf("one writer goroutine put the index at %d entries (MaxEntries %d) while another goroutine's pass "+
			"held the maintenance lock; README: at most %d", peak, max, limit)
	}
	t.Logf("peak %d entries for MaxEntries %d", peak, max)
}
