package redis

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// cmdPanicHook is a go-redis hook that panics, while armed, on every
// command named one of names, alone or in a pipeline.
type cmdPanicHook struct {
	names  []string
	armed  atomic.Bool
	panics atomic.Int64
}

func (h *cmdPanicHook) hit(cmds ...goredis.Cmder) {
	if !h.armed.Load() {
		return
	}
	for _, c := range cmds {
		for _, n := range h.names {
			if cmdName(c) == n {
				h.panics.Add(1)
				panic(fmt.Sprintf("hook panics on %s", n))
			}
		}
	}
}

func (h *cmdPanicHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *cmdPanicHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.hit(cmd)
		return next(ctx, cmd)
	}
}
func (h *cmdPanicHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		h.hit(cmds...)
		return next(ctx, cmds)
	}
}

// A panic in a Redis call made on one of the package's own goroutines (a
// writer storing a loaded value) is counted as a failed write, instead of
// ending the process.
func TestWriterSurvivesClientPanic(t *testing.T) {
	checkLeaks(t)
	client := standaloneClient(t)
	h := &cmdPanicHook{names: []string{"evalsha", "eval"}}
	client.AddHook(h)
	src := newSource()
	src.set("a", "va")
	c := newTier(t, client, src, nil)
	waitSubscribed(t, c)
	h.armed.Store(true)
	mustGet(t, c, "a", "va") // loaded; its write to Redis panics
	eventually(t, 10*time.Second, "the write counted as failed", func() bool { return c.Stats().L2WriteErrors == 1 })
	if h.panics.Load() == 0 {
		t.Fatal("the hook never panicked")
	}
	h.armed.Store(false)
	if err := c.Set(context.Background(), "b", "vb"); err != nil {
		t.Fatalf("Set after the panic: %v", err)
	}
}

// A panic in the pipeline that a goroutine of the read coalescing sends
// for queued reads fails those reads (each caller falls back to its
// loader) instead of ending the process, and the round trip is given back.
func TestQueuedReadsSurviveClientPanic(t *testing.T) {
	checkLeaks(t)
	client := standaloneClient(t)
	src := newSource()
	for i := range 3 {
		src.set(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	c := newTier(t, client, src, func(o *Options[string]) { o.ReadsInFlight = 1 })
	waitSubscribed(t, c)
	// h first, so that the held GET of k0 has passed it before it is
	// armed.
	h := &cmdPanicHook{names: []string{"get"}}
	client.AddHook(h)
	g := newGate(c.prefix + "k0")
	client.AddHook(g)

	ctx := context.Background()
	first := getAsync(c, ctx, "k0")
	<-g.entered // the one round trip is held
	rest := []<-chan error{getAsync(c, ctx, "k1"), getAsync(c, ctx, "k2")}
	eventually(t, 10*time.Second, "the other reads queued", func() bool { return queuedReads(c) == 2 })
	h.armed.Store(true) // the queued reads' pipeline panics
	close(g.release)
	for _, done := range append(rest, first) {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if h.panics.Load() == 0 {
		t.Fatal("the hook never panicked")
	}
	if st := c.Stats(); st.L2Errors < 2 || st.Loads < 2 {
		t.Fatalf("L2Errors %d, Loads %d: want the two queued reads failed and loaded from the source", st.L2Errors, st.Loads)
	}
	h.armed.Store(false)
	mustGet(t, c, "k0", "v0")
}

// A handler that panics on the subscription's goroutine (a ByteTier's
// Invalidate) ends that subscription, which is counted as lost and tried
// again (the caller's copies are flushed as after any loss), instead of
// ending the process; panics in Lost and Flush are logged.
func TestSubscriptionSurvivesHandlerPanic(t *testing.T) {
	checkLeaks(t)
	client := standaloneClient(t)
	writer, _ := newByteTier(t, client, nil)
	lines := &lineCounter{}
	bt, _ := newByteTier(t, client, func(o *ByteTierOptions) {
		o.ResubscribeDelay = MinPeriod
		o.Logger = slog.New(slog.NewTextHandler(lines, nil))
	})
	var calls, flushes atomic.Int64
	bt.SetHandlers(Handlers{
		Invalidate: func([]byte) {
			if calls.Add(1) == 1 {
				panic("Invalidate panics")
			}
		},
		Lost:  func() { panic("Lost panics") },
		Flush: func() { flushes.Add(1); panic("Flush panics") },
	})
	waitTierSubscribed(t, writer, bt)
	if err := writer.Set(context.Background(), []byte("k"), []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the subscription lost and confirmed again", func() bool {
		st := bt.Stats()
		return st.SubscriptionLosses == 1 && st.Subscriptions == 2 && st.Subscribed
	})
	// Both logged: the panic and the loss it caused (they shared a
	// rate-limit bucket, and the loss, right after, went unlogged).
	for _, msg := range []string{"subscription panicked", "subscription lost"} {
		eventually(t, 10*time.Second, "a log line saying "+msg, func() bool { return lines.count(msg) == 1 })
	}
	if err := writer.Set(context.Background(), []byte("k"), []byte("v2"), time.Minute); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the next invalidation handled", func() bool { return calls.Load() >= 2 })
	if flushes.Load() == 0 {
		t.Error("no Flush after the subscription was confirmed again")
	}
}
