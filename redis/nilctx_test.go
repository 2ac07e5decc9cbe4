package redis

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Every method that takes a context returns an error for a nil one, before
// it touches Redis, the breaker, the counters or L1, and without calling
// the Loader. (They panicked, dereferencing the nil Context, some after
// the breaker had admitted the call: see TestNilContextKeepsBreakerProbe
// and TestNilContextThenCallsWork.) No Redis is needed: none is reached.
func TestNilContextIsAnError(t *testing.T) {
	dead := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = dead.Close() }) // after the Cache's Close (cleanups run last first)
	quiet := slog.New(slog.NewTextHandler(&lineCounter{}, nil))

	src := newSource()
	src.set("k", "v")
	c := newTier(t, dead, src, func(o *Options[string]) {
		o.Timeout = 20 * time.Millisecond
		o.ResubscribeDelay = time.Hour
		o.Logger = quiet
	})
	bt, err := NewByteTier(ByteTierOptions{Client: dead, Prefix: testPrefix(t), Timeout: 20 * time.Millisecond,
		ResubscribeDelay: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	cBefore, btBefore := c.Stats(), bt.Stats()

	var nilCtx context.Context // nil: what is tested
	calls := []struct {
		name string
		call func() error
	}{
		{"Cache.Get", func() error { _, err := c.Get(nilCtx, "k"); return err }},
		{"Cache.GetMany", func() error {
			m, err := c.GetMany(nilCtx, []string{"k"})
			if m != nil {
				t.Errorf("Cache.GetMany with a nil Context returned %v; want a nil map", m)
			}
			return err
		}},
		{"Cache.Set", func() error { return c.Set(nilCtx, "k", "v2") }},
		{"Cache.Delete", func() error { return c.Delete(nilCtx, "k") }},
		{"ByteTier.Get", func() error {
			v, _, found, err := bt.Get(nilCtx, []byte("dst"), []byte("k"))
			if found || string(v) != "dst" {
				t.Errorf("ByteTier.Get with a nil Context = %q, found %v; want dst unchanged, not found", v, found)
			}
			return err
		}},
		{"ByteTier.Set", func() error { return bt.Set(nilCtx, []byte("k"), []byte("v"), time.Hour) }},
		{"ByteTier.Delete", func() error {
			found, err := bt.Delete(nilCtx, []byte("k"))
			if found {
				t.Errorf("ByteTier.Delete with a nil Context reported the key found")
			}
			return err
		}},
	}
	for _, cl := range calls {
		checkNilContextCall(t, cl.name, cl.call)
	}

	cAfter, btAfter := c.Stats(), bt.Stats()
	for _, s := range []struct {
		name          string
		before, after Stats
	}{{"Cache", cBefore, cAfter}, {"ByteTier", btBefore, btAfter}} {
		b, a := s.before, s.after
		if a.L2Skipped != b.L2Skipped || a.L2Errors != b.L2Errors || a.L2WriteErrors != b.L2WriteErrors ||
			a.L2Writes != b.L2Writes || a.L2Hits != b.L2Hits || a.L2Misses != b.L2Misses ||
			a.Loads != b.Loads || a.Local.Misses != b.Local.Misses || a.Local.Hits != b.Local.Hits ||
			a.Breaker != b.Breaker || a.BreakerOpens != b.BreakerOpens {
			t.Errorf("%s: the calls with a nil Context changed the stats:\nbefore %+v\nafter  %+v", s.name, b, a)
		}
	}
	if n := src.total.Load(); n != 0 {
		t.Errorf("%d Loader calls; want none", n)
	}
}

// A nil Context must not reach the breaker. ByteTier.Get, Set and Delete
// asked the breaker for a ticket and then panicked on the nil Context
// (callContext read its deadline) without reporting how the call went: a
// call admitted as the half-open probe left the breaker half-open for
// good, and every later call failed with ErrUnavailable without reaching
// Redis. Now they fail before asking, and the next call with a real
// context is the probe. No Redis is needed: the probe is refused by a
// closed port, which counts as a failure and opens the breaker again.
func TestNilContextKeepsBreakerProbe(t *testing.T) {
	dead := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	defer dead.Close()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	bt, err := NewByteTier(ByteTierOptions{Client: dead, Prefix: testPrefix(t), Timeout: 20 * time.Millisecond,
		BreakerFailures: 1, Clock: clock, ResubscribeDelay: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&lineCounter{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	ctx := context.Background()
	if _, _, _, err := bt.Get(ctx, nil, []byte("k")); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get from a closed port: %v; want a network error", err)
	}
	if st := bt.Stats(); st.Breaker != BreakerOpen || st.BreakerOpens != 1 {
		t.Fatalf("after a failed Get: breaker %v, opened %d times; want open, once", st.Breaker, st.BreakerOpens)
	}

	var nilCtx context.Context // nil: what is tested
	for _, cl := range []struct {
		name string
		call func() error
	}{
		{"ByteTier.Get", func() error { _, _, _, err := bt.Get(nilCtx, nil, []byte("k")); return err }},
		{"ByteTier.Set", func() error { return bt.Set(nilCtx, []byte("k"), []byte("v"), time.Hour) }},
		{"ByteTier.Delete", func() error { _, err := bt.Delete(nilCtx, []byte("k")); return err }},
	} {
		clock.add(time.Second) // BreakerOpenFor has passed: the next call would be the probe
		checkNilContextCall(t, cl.name, cl.call)
		if st := bt.Stats(); st.Breaker != BreakerOpen || st.L2Skipped != 0 {
			t.Errorf("after %s with a nil Context: breaker %v, L2Skipped %d; want open (no probe admitted), 0",
				cl.name, st.Breaker, st.L2Skipped)
		}
		// The next call with a context is the probe: it reaches Redis
		// (refused), and the breaker opens again.
		opens := bt.Stats().BreakerOpens
		if _, _, _, err := bt.Get(ctx, nil, []byte("k")); err == nil || errors.Is(err, ErrUnavailable) {
			t.Errorf("Get after %s with a nil Context: %v; want the probe's network error", cl.name, err)
		}
		if st := bt.Stats(); st.Breaker != BreakerOpen || st.BreakerOpens != opens+1 {
			t.Errorf("after the probe that followed %s: breaker %v, opened %d times; want open, %d times",
				cl.name, st.Breaker, st.BreakerOpens, opens+1)
		}
	}
}

// With Redis up, the calls with a context that follow calls with a nil one
// work: ByteTier's probe closes the breaker (it stayed half-open for good),
// and a Cache's Set of the same key is not stuck (Cache.Set and Delete
// panicked on the nil Context while holding the key's write stripe, so
// every later Set or Delete of a key of that stripe waited until its
// context ended, then failed).
func TestNilContextThenCallsWork(t *testing.T) {
	var nilCtx context.Context // nil: what is tested
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	t.Run("ByteTier", func(t *testing.T) {
		cl := standaloneClient(t)
		cl.AddHook(&failFirstGet{})
		clock := &fakeClock{t: time.Unix(1e9, 0)}
		bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
			o.BreakerFailures, o.Clock = 1, clock
			o.Logger = slog.New(slog.NewTextHandler(&lineCounter{}, nil)) // the breaker opens: expected
		})
		if _, _, _, err := bt.Get(ctx, nil, []byte("k")); err == nil {
			t.Fatal("the first Get succeeded; want the hook's failure")
		}
		if st := bt.Stats().Breaker; st != BreakerOpen {
			t.Fatalf("breaker %v after a failed Get; want open", st)
		}
		clock.add(time.Second)
		checkNilContextCall(t, "ByteTier.Get", func() error { _, _, _, err := bt.Get(nilCtx, nil, []byte("k")); return err })
		checkNilContextCall(t, "ByteTier.Set", func() error { return bt.Set(nilCtx, []byte("k"), []byte("v"), time.Hour) })
		checkNilContextCall(t, "ByteTier.Delete", func() error { _, err := bt.Delete(nilCtx, []byte("k")); return err })
		if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil { // the probe
			t.Fatalf("Set after the calls with a nil Context: %v", err)
		}
		if st := bt.Stats().Breaker; st != BreakerClosed {
			t.Errorf("breaker %v after a successful probe; want closed", st)
		}
		v, _, found, err := bt.Get(ctx, nil, []byte("k"))
		if err != nil || !found || string(v) != "v" {
			t.Errorf("Get = %q, found %v, %v; want v", v, found, err)
		}
	})

	t.Run("Cache", func(t *testing.T) {
		cl := standaloneClient(t)
		src := newSource()
		src.set("k", "loaded")
		c := newTier(t, cl, src, nil)
		checkNilContextCall(t, "Cache.Set", func() error { return c.Set(nilCtx, "k", "v1") })
		checkNilContextCall(t, "Cache.Delete", func() error { return c.Delete(nilCtx, "k") })
		if err := c.Set(ctx, "k", "v2"); err != nil {
			t.Fatalf("Set after the calls with a nil Context: %v", err)
		}
		mustGet(t, c, "k", "v2")
		if err := c.Delete(ctx, "k"); err != nil {
			t.Fatalf("Delete after the calls with a nil Context: %v", err)
		}
		if v, ok := rawGet(t, cl, testPrefix(t)+"k"); !ok || parseEntry(v).kind != kindTomb {
			t.Errorf("Redis holds %q after Delete; want a tombstone", v)
		}
	})
}

// checkNilContextCall runs call, a method called with a nil Context, and
// fails the test unless it returns an error saying so (a panic fails the
// test, rather than crashing it).
func checkNilContextCall(t *testing.T, name string, call func() error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s with a nil Context panicked: %v", name, p)
		}
	}()
	if err := call(); err == nil || !strings.Contains(err.Error(), "redis: nil Context") {
		t.Errorf("%s with a nil Context: error %v; want one saying \"redis: nil Context\"", name, err)
	}
}

// failFirstGet is a go-redis hook that fails the first GET with a network
// error (one that opens the breaker) and passes the rest through.
type failFirstGet struct{ n atomic.Int32 }

func (h *failFirstGet) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *failFirstGet) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "get" && h.n.Add(1) == 1 {
			cmd.SetErr(errors.New("injected network failure"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}
func (h *failFirstGet) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
