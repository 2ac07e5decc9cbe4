package redis

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// lateContext is a caller's context with a deadline whose Err is still nil
// once the deadline has passed: the moment between the client's connection
// deadline (which the client takes from the context) firing and the
// context's own timer setting Err, which with a real context.WithTimeout
// the call lands in most of the time (143 of 200 Gets of a ByteTier with a
// 5ms deadline against a hanging Redis counted in L2Errors).
type lateContext struct {
	context.Context
	d time.Time
}

func (c lateContext) Deadline() (time.Time, bool) { return c.d, true }

// A call that the caller's own deadline ended is no failure of Redis: it
// counts neither in L2Errors or L2WriteErrors nor for the breaker (here
// opened by a single failure), whether or not the context's timer has set
// Err by the time the call returns.
func TestCallerDeadlineIsNoRedisFailure(t *testing.T) {
	bh, err := redistest.NewBlackHole()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bh.Close)
	cl := goredis.NewClient(&goredis.Options{Addr: bh.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = cl.Close() })
	quiet := slog.New(slog.DiscardHandler)
	soon := func() context.Context {
		return lateContext{Context: context.Background(), d: time.Now().Add(20 * time.Millisecond)}
	}

	newBT := func() *ByteTier {
		bt, err := NewByteTier(ByteTierOptions{Client: cl, Logger: quiet, Timeout: time.Second, BreakerFailures: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bt.Close)
		return bt
	}
	bt := newBT()
	if _, _, _, err := bt.Get(soon(), nil, []byte("k")); err == nil {
		t.Fatal("ByteTier.Get against a hanging Redis: no error")
	}
	if st := bt.Stats(); st.L2Errors != 0 || st.Breaker != BreakerClosed {
		t.Errorf("ByteTier after a Get ended by its caller's deadline: L2Errors %d, breaker %v; want 0, closed", st.L2Errors, st.Breaker)
	}
	bt = newBT()
	if err := bt.Set(soon(), []byte("k"), []byte("v"), time.Minute); err == nil {
		t.Fatal("ByteTier.Set against a hanging Redis: no error")
	}
	if st := bt.Stats(); st.L2WriteErrors != 0 || st.Breaker != BreakerClosed {
		t.Errorf("ByteTier after a Set ended by its caller's deadline: L2WriteErrors %d, breaker %v; want 0, closed", st.L2WriteErrors, st.Breaker)
	}

	c, err := New(Options[string]{Client: cl, Loader: newSource(), Logger: quiet, Timeout: time.Second, BreakerFailures: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if _, _, found, _ := c.read(soon(), "k"); found != l2Unavailable {
		t.Fatalf("Cache read against a hanging Redis: %v; want l2Unavailable", found)
	}
	if st := c.Stats(); st.L2Errors != 0 || st.Breaker != BreakerClosed {
		t.Errorf("Cache after a read ended by its caller's deadline: L2Errors %d, breaker %v; want 0, closed", st.L2Errors, st.Breaker)
	}
}
