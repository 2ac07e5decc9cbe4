package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Once its write is sent, Set waits for Redis's answer even if ctx is
// cancelled. A write refused with NOSCRIPT (a server restarted or failed
// over, or a cluster master that never ran the script) is sent again,
// whole; that second attempt went on the call's context, derived from the
// cancelled ctx, which go-redis refuses to send: the write was abandoned,
// Set returned "context canceled" with this instance's L1 holding v2 and
// Redis v1 (its invalidation already out). The attempts after the first
// now keep the call's deadline but not the caller's cancellation. (Found
// by a review helper, as the next.)
func TestCancelledSetResentAfterNoscript(t *testing.T) {
	checkLeaks(t)
	s := private(t)
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cl.Close() })
	h := &cancelOn{match: noScriptWrite}
	cl.AddHook(h)
	c := newTier(t, cl, newSource(), nil)
	waitSubscribed(t, c)
	if err := c.Set(context.Background(), "k", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := cl.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.cancel = cancel
	err := c.Set(ctx, "k", "v2")
	if !h.fired.Load() {
		t.Fatal("no NOSCRIPT")
	}
	raw, _ := rawGet(t, cl, c.prefix+"k")
	if got := parseEntry(raw).payload(); err != nil || got != "v2" {
		t.Errorf("Set cancelled after its write was sent = %v, Redis holds %q: want nil and v2 (L1 holds v2)", err, got)
	}
}

// The same for a Delete whose write was refused as late but answered in
// time (the server's clock moved forward since the estimate), which is sent
// again bounded by that answer: with ctx cancelled meanwhile, the key was
// gone from L1 while Redis still held v1, which the next Get read back.
func TestCancelledDeleteResentAfterTooLate(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	h := &cancelOn{match: tooLateWrite}
	cl.AddHook(h)
	src := newSource()
	c := newTier(t, cl, src, nil)
	waitSubscribed(t, c)
	if err := c.Set(context.Background(), "k", "v1"); err != nil {
		t.Fatal(err)
	}
	// The estimate of the server's clock goes an hour behind (as after the
	// server's clock stepped forward): the next write is refused as late,
	// answered in time, and sent again.
	c.clockAt("").observe(sample{off: -time.Hour.Milliseconds()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.cancel = cancel
	err := c.Delete(ctx, "k")
	if !h.fired.Load() {
		t.Fatal("the write was not refused as late")
	}
	raw, _ := rawGet(t, cl, c.prefix+"k")
	if err != nil || parseEntry(raw).kind != kindTomb {
		t.Errorf("Delete cancelled after its write was sent = %v, Redis entry kind %q: want nil and a tombstone", err, parseEntry(raw).kind)
	}
	if v, gerr := c.Get(context.Background(), "k"); gerr == nil {
		t.Errorf("Get after the Delete = %q: the deleted value came back from Redis", v)
	}
}
