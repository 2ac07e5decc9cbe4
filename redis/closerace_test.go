package redis

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// gateClock blocks the first call of Now made after arm until release is
// closed, announcing it on entered.
type gateClock struct {
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (c *gateClock) arm() {
	c.mu.Lock()
	c.armed = true
	c.mu.Unlock()
}

func (c *gateClock) Now() time.Time {
	c.mu.Lock()
	armed := c.armed
	c.armed = false
	c.mu.Unlock()
	if armed {
		close(c.entered)
		<-c.release
	}
	return time.Now()
}

type sysClock struct{}

func (sysClock) Now() time.Time { return time.Now() }

// L1's Close does not wait for a Get that is probing Redis on its own
// goroutine: its read of Redis could start after Close had returned (and,
// with reads queued behind it, start a goroutine that drains them after
// Close), against a client the caller may have closed since (a "read
// failed", counted in L2Errors and by the breaker). After Close, nothing
// is sent to Redis.
func TestGetRacingCloseReadsNothing(t *testing.T) {
	cl, cnt := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	clk := &gateClock{entered: make(chan struct{}), release: make(chan struct{})}
	c := newTier(t, cl, newSource(), func(o *Options[string]) {
		o.Clock = clk // read by the probe before it reads Redis
		o.Local.Clock = sysClock{}
	})
	waitSubscribed(t, c)
	clk.arm()
	got := make(chan error, 1)
	go func() {
		_, err := c.Get(context.Background(), "k")
		got <- err
	}()
	<-clk.entered // the Get is probing
	c.Close()
	sent := cnt.n.Load()
	close(clk.release)
	err := <-got
	if n := cnt.n.Load() - sent; n != 0 {
		t.Errorf("%d Redis commands sent after Close returned; want 0", n)
	}
	if st := c.Stats(); st.L2Errors != 0 || st.Breaker != BreakerClosed {
		t.Errorf("after Close: L2Errors %d, breaker %v; want 0, closed", st.L2Errors, st.Breaker)
	}
	if !errors.Is(err, loading.ErrClosed) {
		t.Errorf("Get racing Close: %v; want loading.ErrClosed", err)
	}
}

// A read that comes to reads after Close (reads.wait) takes no round trip
// and joins no queue: no goroutine is started to drain it after Close.
func TestReadsAfterClose(t *testing.T) {
	cl, cnt := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	c := newTier(t, cl, newSource(), nil)
	c.Close()
	sent := cnt.n.Load()
	res := c.reads.get(context.Background(), context.Background(), c.prefix+"k", time.Now())
	if !errors.Is(res.err, ErrClosed) {
		t.Errorf("a read after Close: %v; want ErrClosed", res.err)
	}
	if n := cnt.n.Load() - sent; n != 0 {
		t.Errorf("%d Redis commands sent after Close returned; want 0", n)
	}
}
