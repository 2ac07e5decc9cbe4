package redis

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// evalHold holds the first EVALSHA (a loaded value's compare-and-set write)
// until release is closed, and then fails it with a network-like error.
type evalHold struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *evalHold) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *evalHold) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "evalsha" {
			first := false
			h.once.Do(func() { first = true })
			if first {
				close(h.entered)
				<-h.release
				cmd.SetErr(errors.New("injected network failure"))
				return cmd.Err()
			}
		}
		return next(ctx, cmd)
	}
}
func (h *evalHold) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// A loaded value's queued write that found the circuit breaker open was
// counted only in L2WritesDropped, not in L2Skipped ("Redis calls not made
// because the circuit breaker was open"), where reads, Sets and Deletes
// refused by the breaker count. It now counts in both.
func TestBreakerRefusedLoadedWriteCountsSkipped(t *testing.T) {
	s := standalone(t)
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cl.Close() })
	hold := &evalHold{entered: make(chan struct{}), release: make(chan struct{})}
	cl.AddHook(hold)
	src := newSource()
	src.set("k1", "v1")
	src.set("k2", "v2")
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)} // never moves: the breaker stays open
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Clock = clk
		o.BreakerFailures = 1
		o.Writers = 1
	})
	waitSubscribed(t, c)
	mustGet(t, c, "k1", "v1") // its write is held by the hook
	<-hold.entered
	mustGet(t, c, "k2", "v2") // read Redis (breaker closed), its write queued
	close(hold.release)       // the first write fails: the breaker opens
	eventually(t, 10*time.Second, "the queued write refused by the open breaker", func() bool {
		return c.Stats().L2WritesDropped == 1
	})
	st := c.Stats()
	if st.Breaker != BreakerOpen {
		t.Fatalf("breaker %v, want open", st.Breaker)
	}
	if st.L2Skipped != 1 {
		t.Errorf("L2Skipped = %d after the breaker refused a queued write; want 1 (a Redis call not made because the breaker was open)", st.L2Skipped)
	}
}
