package redis

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// deadlineStripper is a go-redis hook that runs pipelines without the
// caller's deadline (so that a tiny Options.Timeout does not make them time
// out, and the test sees what Redis answers).
type deadlineStripper struct{}

func (deadlineStripper) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (deadlineStripper) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (deadlineStripper) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		return next(context.WithoutCancel(ctx), cmds)
	}
}

// A TombstoneTTL under a millisecond that New accepts (it is more than
// twice Timeout) must give working Deletes: the tombstone's PX must not be
// truncated to 0, which Redis refuses ("invalid expire time").
func TestSubMillisecondTombstoneTTL(t *testing.T) {
	cl := standaloneClient(t)
	cl.AddHook(deadlineStripper{})
	src := newSource()
	o := Options[string]{
		Client:       cl,
		Loader:       src,
		Prefix:       testPrefix(t),
		Timeout:      100 * time.Microsecond,
		TombstoneTTL: 500 * time.Microsecond,
	}
	o.Local.MaxEntries = 100
	c, err := New(o)
	if errors.Is(err, ErrInvalidOptions) {
		return // refusing it is fine too
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Delete(context.Background(), "k"); err != nil {
		t.Fatalf("Delete with TombstoneTTL %v: %v", o.TombstoneTTL, err)
	}
}

// The tombstone lives at least TombstoneTTL: its PX is rounded up, not
// down (1.9ms must not become 1ms, shorter than the loads it must outlive).
func TestTombstonePXRoundsUp(t *testing.T) {
	cl := standaloneClient(t)
	var px []any
	cl.AddHook(argsRecorder{f: func(cmds []goredis.Cmder) {
		for _, c := range cmds {
			if cmdName(c) == "set" {
				px = c.Args()
			}
		}
	}})
	src := newSource()
	o := Options[string]{
		Client:       cl,
		Loader:       src,
		Prefix:       testPrefix(t),
		Timeout:      time.Second,
		TombstoneTTL: 2*time.Second + 900*time.Millisecond + 500*time.Microsecond,
	}
	o.Local.MaxEntries = 100
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Delete(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	// The write's script: evalsha|eval, script, 1, key, envelope, "px", ms, latest.
	if len(px) != 8 || px[5] != "px" || px[6] != int64(2901) {
		t.Fatalf("tombstone write args %v, want PX 2901", px)
	}
}

type argsRecorder struct{ f func([]goredis.Cmder) }

func (argsRecorder) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (argsRecorder) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (r argsRecorder) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		r.f(cmds)
		return next(ctx, cmds)
	}
}

// "TombstoneTTL must be more than twice Timeout": a huge Timeout (such as
// math.MaxInt64 for "no timeout") must not pass the check by overflowing
// 2*Timeout into a negative duration.
func TestHugeTimeoutVsTombstoneTTL(t *testing.T) {
	cl := standaloneClient(t)
	for _, timeout := range []time.Duration{math.MaxInt64, math.MaxInt64/2 + 1, 200 * 365 * 24 * time.Hour} {
		o := Options[string]{Client: cl, Loader: newSource(), Prefix: testPrefix(t), Timeout: timeout}
		c, err := New(o)
		if err == nil {
			c.Close()
			t.Errorf("Timeout %v with TombstoneTTL %v (default) accepted", timeout, DefaultTombstoneTTL)
		} else if !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("Timeout %v: %v, want ErrInvalidOptions", timeout, err)
		}
	}
}

// An injected Clock that steps back (an NTP correction, a fake clock
// reset) must not keep the breaker open for the size of the step: after
// OpenFor of the clock's own time it lets a probe through.
func TestBreakerClockBackwards(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	b := newBreaker(1, time.Second, clock, nil)
	b.failure(admit(t, b))
	if b.State() != BreakerOpen {
		t.Fatal("not open")
	}
	clock.add(-time.Hour) // the clock steps back an hour
	clock.add(time.Second)
	clock.add(time.Millisecond)
	if _, ok := b.allow(); !ok {
		t.Fatal("the breaker is still open OpenFor after the clock stepped back: it stays open for the size of the step (1h)")
	}
}

// A NaN Local.TTLJitter is refused at once (loading.New refuses it), not
// after New has counted the default Local.TTL down one nanosecond at a
// time (3e10 steps for the default 30s: minutes of CPU).
func TestNaNJitterRefusedPromptly(t *testing.T) {
	o := Options[string]{Client: goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true}), Loader: newSource()}
	defer o.Client.Close()
	o.Local.MaxEntries = 10
	o.Local.TTLJitter = math.NaN()
	done := make(chan error, 1)
	go func() {
		c, err := New(o)
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInvalidOptions) {
			t.Fatalf("New with a NaN Local.TTLJitter: %v, want ErrInvalidOptions", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("New with a NaN Local.TTLJitter has not returned after 10s")
	}
}

// A *goredis.Ring is a client New accepts (checkClient checks its
// ContextTimeoutEnabled): its subscription must work, and Close must
// return. (Ring.Subscribe panics without a channel; the panic left the
// subscription's mutex locked, so Close hung for ever.)
func TestRingClient(t *testing.T) {
	s := standalone(t)
	ring := goredis.NewRing(&goredis.RingOptions{
		Addrs:                 map[string]string{"a": s.Addr()},
		ContextTimeoutEnabled: true,
	})
	defer ring.Close()
	for _, name := range []string{"Cache", "ByteTier"} {
		t.Run(name, func(t *testing.T) {
			var closeFn func()
			var stats func() Stats
			if name == "Cache" {
				o := Options[string]{Client: ring, Loader: newSource(), Prefix: testPrefix(t), Timeout: time.Second}
				o.Local.MaxEntries = 100
				c, err := New(o)
				if err != nil {
					t.Fatal(err)
				}
				closeFn, stats = c.Close, c.Stats
			} else {
				bt, err := NewByteTier(ByteTierOptions{Client: ring, Prefix: testPrefix(t), Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				closeFn, stats = bt.Close, bt.Stats
			}
			deadline := time.Now().Add(5 * time.Second)
			for !stats().Subscribed && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
			}
			if !stats().Subscribed {
				t.Error("subscription not confirmed within 5s")
			}
			done := make(chan struct{})
			go func() { closeFn(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Close has not returned after 10s")
			}
		})
	}
}
