package redis

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// faultTier returns a tier on a client for addr with a short Redis
// deadline and a quick breaker, as the fault tests need.
func faultTier(t *testing.T, addr string, src *source, readTimeout, degradedTTL time.Duration) (*Cache[string], *commandCounter) {
	t.Helper()
	cl := goredis.NewClient(&goredis.Options{
		Addr: addr, ContextTimeoutEnabled: true, MaxRetries: 1,
		DialTimeout: readTimeout, ReadTimeout: readTimeout, WriteTimeout: readTimeout, PoolTimeout: readTimeout,
	})
	cnt := &commandCounter{}
	cl.AddHook(cnt)
	t.Cleanup(func() { _ = cl.Close() })
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Timeout = faultTimeout
		o.BreakerFailures = 3
		o.BreakerOpenFor = 50 * time.Millisecond
		o.ResubscribeDelay = 10 * time.Millisecond
		o.HealthCheck = 500 * time.Millisecond
		o.DegradedTTL = degradedTTL
	})
	return c, cnt
}

const (
	faultTimeout = 100 * time.Millisecond
	// missBound bounds a miss while Redis is down or hangs: the deadline
	// (one Redis call) plus a wide margin for -race on a busy machine. A
	// client that ignored the deadline would wait for its 10s read timeout.
	missBound = faultTimeout + 2*time.Second
)

// Redis killed: L1 hits go on without a Redis command; misses reach the
// loader within the deadline; the breaker opens and later calls skip Redis.
func TestRedisKilled(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	src := newSource()
	for i := range 20 {
		src.set(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	c, cnt := faultTier(t, srv.Addr(), src, 10*time.Second, time.Second)
	waitSubscribed(t, c)
	mustGet(t, c, "k0", "v0")
	eventually(t, 10*time.Second, "k0 written to Redis", func() bool { return c.Stats().L2Writes == 1 })
	flushes := c.Stats().Flushes
	srv.Kill()

	before := cnt.n.Load()
	for range 100 {
		mustGet(t, c, "k0", "v0")
	}
	if n := cnt.n.Load() - before; n != 0 {
		t.Fatalf("L1 hits with Redis down sent %d commands", n)
	}
	for i := 1; i < 20; i++ {
		start := time.Now()
		mustGet(t, c, fmt.Sprint("k", i), fmt.Sprint("v", i))
		if d := time.Since(start); d > missBound {
			t.Fatalf("a miss with Redis down took %v, want <= %v", d, missBound)
		}
	}
	st := c.Stats()
	if st.L2Errors == 0 || st.BreakerOpens == 0 || st.L2Skipped == 0 || st.Loads != 20 {
		t.Fatalf("stats %+v: want L2 errors, the breaker opened, skipped reads, 20 loads", st)
	}
	if st.L2ReadMax > missBound {
		t.Fatalf("a Redis read took %v, want <= %v", st.L2ReadMax, missBound)
	}
	// DegradedTTL after the loss of the subscription, L1 is flushed: the
	// next Get of k0 goes to the source.
	eventually(t, 10*time.Second, "L1 flushed DegradedTTL after the loss", func() bool { return c.Stats().Flushes > flushes })
	mustGet(t, c, "k0", "v0")
	if n := src.count("k0"); n != 2 {
		t.Fatalf("k0 loaded %d times, want 2 (L1 flushed after DegradedTTL)", n)
	}
}

// Redis restarted on the same port: the tier recovers by itself: reads and
// writes reach Redis again and the subscription comes back.
func TestRedisRestarted(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	src := newSource()
	src.set("k", "v1")
	a, _ := faultTier(t, srv.Addr(), src, time.Second, time.Minute)
	bb, _ := faultTier(t, srv.Addr(), src, time.Second, time.Minute)
	waitSubscribed(t, a, bb)
	mustGet(t, bb, "k", "v1")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Misses of fresh keys until one reads Redis successfully again.
	i := 0
	eventually(t, 20*time.Second, "reads reach the restarted Redis", func() bool {
		i++
		k := fmt.Sprint("fresh", i)
		src.set(k, "x")
		mustGet(t, a, k, "x")
		st := a.Stats()
		return st.L2Misses > 1 && st.Breaker == BreakerClosed
	})
	eventually(t, 20*time.Second, "both subscriptions back", func() bool {
		sa, sb := a.Stats(), bb.Stats()
		return sa.Subscribed && sb.Subscribed && sb.SubscriptionLosses >= 1 && sb.Subscriptions >= 2
	})
	if err := a.Set(context.Background(), "k", "v2"); err != nil {
		t.Fatal(err)
	}
	eventually(t, invalidationBound, "B receives A's update after the restart", func() bool { return bb.Stats().InvalidationsReceived >= 1 })
	mustGet(t, bb, "k", "v2")
}

// A black hole (a server that accepts connections and never answers):
// misses still reach the loader within the deadline, L1 hits are not
// delayed, and goroutines do not pile up.
func TestBlackHole(t *testing.T) {
	checkLeaks(t)
	bh, err := redistest.NewBlackHole()
	if err != nil {
		t.Fatal(err)
	}
	defer bh.Close()
	base := runtime.NumGoroutine()
	src := newSource()
	const n = 50
	for i := range n {
		src.set(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	// go-redis's own read timeout is 10s: only the tier's deadline can
	// keep the calls short.
	c, cnt := faultTier(t, bh.Addr(), src, 10*time.Second, time.Minute)

	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			k := fmt.Sprint("k", i)
			v, err := c.Get(context.Background(), k)
			if d := time.Since(start); err != nil || v != fmt.Sprint("v", i) || d > missBound {
				errs <- fmt.Errorf("Get(%s) = %q, %v after %v; want v%d within %v", k, v, err, d, i, missBound)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	before := cnt.n.Load()
	for i := range n {
		mustGet(t, c, fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	if d := cnt.n.Load() - before; d != 0 {
		t.Fatalf("L1 hits sent %d commands to the black hole", d)
	}
	st := c.Stats()
	if st.BreakerOpens == 0 || st.Subscribed {
		t.Fatalf("stats %+v: want the breaker opened, no subscription", st)
	}
	// The calls are over: their goroutines must be gone (a few belong to
	// the client and the tier: the subscription, the writers, the pool).
	eventually(t, 10*time.Second, "goroutines back near the baseline", func() bool {
		return runtime.NumGoroutine() <= base+10
	})
	t.Logf("black hole: %d connections accepted, %d L2 errors, %d skipped; goroutines %d (baseline %d)",
		bh.Accepted(), st.L2Errors, st.L2Skipped, runtime.NumGoroutine(), base)
}

// Close returns promptly while Redis hangs: a subscription attempt in
// progress is bounded by Timeout, not by the client's (long) ReadTimeout.
func TestCloseWhileRedisHangs(t *testing.T) {
	bh, err := redistest.NewBlackHole()
	if err != nil {
		t.Fatal(err)
	}
	defer bh.Close()
	cl := goredis.NewClient(&goredis.Options{Addr: bh.Addr(), ContextTimeoutEnabled: true, MaxRetries: 1,
		DialTimeout: time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: time.Second, PoolTimeout: time.Second})
	defer cl.Close()
	c, err := New(Options[string]{Client: cl, Loader: newSource(), Prefix: testPrefix(t), Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c.Close()
	// Far below the 30s read timeout it would otherwise wait out; far
	// above the 100ms an attempt may take, for a loaded machine.
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Close took %v with Redis hanging (Timeout 100ms, ReadTimeout 30s)", d.Round(time.Millisecond))
	}
}

// A Redis busy running a script answers every command with -BUSY: the tier
// is unavailable (errors, counted by the breaker), not holding values this
// cache cannot read.
func TestBusyRedisIsUnavailable(t *testing.T) {
	srv := private(t)
	ctx := context.Background()
	admin := srv.Client()
	defer admin.Close()
	if err := admin.ConfigSet(ctx, "busy-reply-threshold", "1").Err(); err != nil {
		t.Fatal(err)
	}
	cl := srv.Client()
	defer cl.Close()
	c := newTier(t, cl, newSource(), func(o *Options[string]) { o.BreakerFailures = 2 })
	waitSubscribed(t, c)
	blocker := srv.Client()
	defer blocker.Close()
	go blocker.Eval(context.Background(), "while true do end", nil)
	eventually(t, 10*time.Second, "the server answers BUSY", func() bool {
		err := admin.Ping(ctx).Err()
		return err != nil && strings.HasPrefix(err.Error(), "BUSY")
	})
	defer admin.Do(ctx, "script", "kill")
	for i := range 5 {
		_, _ = c.Get(ctx, fmt.Sprint("k", i))
	}
	if st := c.Stats(); st.L2Incompatible != 0 || st.L2Errors == 0 || st.BreakerOpens == 0 {
		t.Fatalf("BUSY replies: %d incompatible values, %d errors, %d breaker openings; want errors and an open breaker",
			st.L2Incompatible, st.L2Errors, st.BreakerOpens)
	}
}

// replyErr is an error reply from Redis, as go-redis returns it.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// replyHook answers every GET (alone or in a pipeline) with an error reply.
type replyHook struct{ reply replyErr }

func (h replyHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h replyHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "get" {
			cmd.SetErr(h.reply)
			return h.reply
		}
		return next(ctx, cmd)
	}
}
func (h replyHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		var err error
		for _, cmd := range cmds {
			if cmdName(cmd) == "get" {
				cmd.SetErr(h.reply)
				err = h.reply
			}
		}
		if err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// A MOVED or ASK reply that outlasts go-redis's redirects (a cluster
// resharding) is a failure of the tier, counted in L2Errors, not a key
// holding a foreign value (L2Incompatible); WRONGTYPE is the latter.
func TestRedirectReplyIsAnError(t *testing.T) {
	for _, tc := range []struct {
		reply        replyErr
		incompatible bool
	}{
		{"MOVED 3999 127.0.0.1:6381", false},
		{"ASK 3999 127.0.0.1:6381", false},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", true},
	} {
		t.Run(string(tc.reply)[:strings.IndexByte(string(tc.reply), ' ')], func(t *testing.T) {
			cl := standaloneClient(t)
			cl.AddHook(replyHook{tc.reply})
			src := newSource()
			src.set("a", "v")
			c, err := New(Options[string]{Client: cl, Loader: src, Prefix: testPrefix(t), Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			mustGet(t, c, "a", "v")
			bt, err := NewByteTier(ByteTierOptions{Client: cl, Prefix: testPrefix(t), Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer bt.Close()
			_, _, _, terr := bt.Get(context.Background(), []byte("a"), nil)
			for name, st := range map[string]Stats{"Cache": c.Stats(), "ByteTier": bt.Stats()} {
				got := st.L2Incompatible == 1 && st.L2Errors == 0
				if !tc.incompatible {
					got = st.L2Incompatible == 0 && st.L2Errors == 1
				}
				if !got {
					t.Errorf("%s: L2Incompatible %d, L2Errors %d after one GET answered %q", name, st.L2Incompatible, st.L2Errors, tc.reply)
				}
			}
			if (terr == nil) != tc.incompatible {
				t.Errorf("ByteTier.Get: err %v", terr)
			}
		})
	}
}
