package redis

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// casHold is a go-redis hook on the writers' compare-and-set (EVALSHA, or
// EVAL when the script is not cached): it holds the first one until
// release is closed, then fails every one while fail is set.
type casHold struct {
	entered chan struct{}
	release chan struct{}
	held    atomic.Bool
	fail    atomic.Bool
}

func (h *casHold) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *casHold) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if n := cmdName(cmd); n != "evalsha" && n != "eval" {
			return next(ctx, cmd)
		}
		if h.held.CompareAndSwap(false, true) {
			close(h.entered)
			<-h.release
		}
		if h.fail.Load() {
			cmd.SetErr(errors.New("injected: connection reset"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}
func (h *casHold) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// Failed L2 writes of loaded values are counted, logged and dropped (issue
// #7): a write that finds the queue full is dropped, counted in
// L2WritesDropped and logged; one that Redis fails is counted in
// L2WriteErrors and logged; neither delays the Gets that loaded them.
func TestFailedLoadedWritesCountedLoggedDropped(t *testing.T) {
	checkLeaks(t)
	client := standaloneClient(t)
	h := &casHold{entered: make(chan struct{}), release: make(chan struct{})}
	client.AddHook(h)
	logs := &lineCounter{}
	src := newSource()
	for _, k := range []string{"a", "b", "c"} {
		src.set(k, "v"+k)
	}
	c := newTier(t, client, src, func(o *Options[string]) {
		o.Writers, o.WriteQueue = 1, 1
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	waitSubscribed(t, c)
	mustGet(t, c, "a", "va") // its write holds the one writer
	<-h.entered
	mustGet(t, c, "b", "vb") // queued
	mustGet(t, c, "c", "vc") // the queue is full: dropped
	if st := c.Stats(); st.L2WritesDropped != 1 || st.Loads != 3 {
		t.Fatalf("L2WritesDropped %d, Loads %d; want 1 (c's write: the queue was full), 3", st.L2WritesDropped, st.Loads)
	}
	if n := logs.count("write queue full"); n != 1 {
		t.Errorf("%d log lines about the full queue, want 1:\n%s", n, logs.buf.String())
	}
	h.fail.Store(true)
	close(h.release) // a's and b's writes fail
	eventually(t, 10*time.Second, "both writes counted as failed", func() bool { return c.Stats().L2WriteErrors == 2 })
	if n := logs.count("write failed"); n == 0 {
		t.Errorf("no log line about the failed writes:\n%s", logs.buf.String())
	}
	if st := c.Stats(); st.L2Writes != 0 {
		t.Errorf("L2Writes %d, want 0", st.L2Writes)
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, ok := rawGet(t, client, c.prefix+k); ok {
			t.Errorf("%s is in Redis; its write was dropped or failed", k)
		}
	}
}

// hangHook is a go-redis hook under which Redis hangs for GETs and for
// pipelines holding a SET (a Set's write): they return only when their
// context ends. entered counts the calls held.
type hangHook struct{ entered atomic.Int32 }

func (h *hangHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *hangHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) != "get" {
			return next(ctx, cmd)
		}
		h.entered.Add(1)
		<-ctx.Done()
		cmd.SetErr(ctx.Err())
		return ctx.Err()
	}
}
func (h *hangHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if cmdName(c) == "set" || cmdName(c) == "get" {
				h.entered.Add(1)
				<-ctx.Done()
				for _, c := range cmds {
					c.SetErr(ctx.Err())
				}
				return ctx.Err()
			}
		}
		return next(ctx, cmds)
	}
}

// Redis hanging never delays an L1 hit (issue #7): while a Get's read and
// a Set's write hang, a Get of a key in L1 returns, without a command to
// Redis. The held calls end only when their callers give up (their
// Timeout is far longer than the test), so the hits cannot have waited
// for them.
func TestL1HitWhileRedisHangs(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	h := &hangHook{}
	cl.AddHook(h)
	cnt := &commandCounter{}
	cl.AddHook(cnt)
	src := newSource()
	src.set("miss", "m")
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Timeout = time.Hour
		o.TombstoneTTL = 3 * time.Hour
		o.TTL = 10 * time.Hour
	})
	waitSubscribed(t, c)

	// A value in L1: a Set whose Redis write hangs (L1 has the value).
	sctx, scancel := context.WithCancel(context.Background())
	setDone := make(chan error, 1)
	go func() { setDone <- c.Set(sctx, "k", "v") }()
	eventually(t, 10*time.Second, "the Set's write sent", func() bool { return h.entered.Load() == 1 })
	// A Get that misses L1, whose read of Redis hangs.
	gctx, gcancel := context.WithCancel(context.Background())
	getDone := make(chan error, 1)
	go func() { _, err := c.Get(gctx, "miss"); getDone <- err }()
	eventually(t, 10*time.Second, "the miss's read sent", func() bool { return h.entered.Load() == 2 })

	sent := cnt.n.Load()
	for range 100 {
		mustGet(t, c, "k", "v")
	}
	if n := cnt.n.Load() - sent; n != 0 {
		t.Errorf("L1 hits sent %d commands to the hanging Redis", n)
	}
	select {
	case err := <-getDone:
		t.Fatalf("the miss returned (%v) before its caller gave up: nothing held the hits", err)
	case err := <-setDone:
		t.Fatalf("the Set returned (%v) before its caller gave up: nothing held the hits", err)
	default:
	}
	if st := c.Stats(); st.L1Hits != 100 {
		t.Errorf("L1Hits %d, want 100", st.L1Hits)
	}
	gcancel()
	scancel()
	if err := <-getDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the held Get: %v; want context.Canceled", err)
	}
	if err := <-setDone; err == nil {
		t.Error("the held Set returned nil")
	}
}
