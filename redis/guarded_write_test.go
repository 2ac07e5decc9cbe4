package redis

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// hungClient is a client of srv that lets the call's deadline alone end
// a call (as in TestHungRedisRunsNoLateWrite).
func hungClient(t *testing.T, srv *redistest.Server) *goredis.Client {
	t.Helper()
	cl := goredis.NewClient(&goredis.Options{
		Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour, DialTimeout: time.Hour,
	})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// idleClock makes c's estimate of the clock of rkey's server what it is
// after 2*clockWindow (20 s) without a write: the current window ended
// longer than clockWindow ago. (Equivalent to a real pause of 20 s; only
// the window's end is moved.)
func idleClock(c *core, rkey string) {
	clk := c.clockAt(c.nodeAddr(context.Background(), context.Background(), rkey))
	clk.mu.Lock()
	clk.until = time.Now().Add(-clockWindow - time.Second)
	clk.mu.Unlock()
}

// The guard against late writes switched itself off after ~20 s without a
// write: serverClock.turn dropped both windows' samples once the current
// window had ended more than clockWindow ago, latest then returned 0 (no
// bound), and writeAndPublish neither bounded the write nor waited for
// settle. A timed-out Set held by a hung Redis after an idle spell landed
// later over whatever had been written since. The last window with samples
// is now kept, however old.
func TestLateWriteGuardSurvivesIdleSpell(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srv := private(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	bt, _ := newByteTier(t, hungClient(t, srv), func(o *ByteTierOptions) { o.Timeout = 100 * time.Millisecond })
	// A write answered: the script known to the server, and an estimate.
	if err := bt.Set(ctx, []byte("k"), []byte("before"), time.Hour); err != nil {
		t.Fatal(err)
	}
	before, _ := rawGet(t, admin, bt.prefix+"k")
	idleClock(&bt.core, bt.prefix+"k") // no write for 20 s
	writeHeldByHungServer(t, srv, admin, func() error { return bt.Set(ctx, []byte("k"), []byte("late"), time.Hour) })
	if raw, _ := rawGet(t, admin, bt.prefix+"k"); raw != before {
		t.Errorf("after 20 s without a write, a Set that reached Redis past its deadline (the caller had given up "+
			"on it) landed: Redis holds %.40q, want %.40q as before it", raw, before)
	}
}

// clockAheadHook is a go-redis hook that makes its client's server behave as
// if its clock were ahead by ms milliseconds for the write scripts: a
// script's latest time (its last argument) is translated to the real
// clock before it is sent, and the server time in its answer back to the
// skewed clock.
type clockAheadHook struct{ ms int64 }

func (h *clockAheadHook) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *clockAheadHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *clockAheadHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if n := cmdName(c); n == "set" || n == "delete" {
				args := c.Args()
				if l, ok := args[len(args)-1].(int64); ok && l > 0 {
					args[len(args)-1] = l - h.ms
				}
			}
		}
		err := next(ctx, cmds)
		for _, c := range cmds {
			if n := cmdName(c); (n == "set" || n == "delete") && c.Err() == nil {
				if vals, ok := c.(*goredis.Cmd).Val().([]any); ok && len(vals) == 2 {
					if s, ok := vals[1].(int64); ok {
						vals[1] = s + h.ms
					}
				}
			}
		}
		return err
	}
}

// A Ring (or Cluster) has several servers, each with its own clock, but a
// core kept one estimate for all of them: once a write to a shard whose
// clock is ahead had been refused as late and answered in time, the
// estimate was reset to that shard's offset, and the next writes to the
// other shards got a latest time that far past their deadline, while
// settle still ended a few milliseconds after it: a timed-out Set to a
// hung shard landed after its caller had returned, over the newer value.
// Each server now has its own estimate. Here shard B's clock runs 2 s
// ahead of shard A's (simulated with a hook on B's client).
func TestLateWriteGuardPerShardClock(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srvA, srvB := private(t), private(t) // A hangs; B's clock is 2 s ahead
	adminA := srvA.Client()
	t.Cleanup(func() { _ = adminA.Close() })
	ring := goredis.NewRing(&goredis.RingOptions{
		Addrs:                 map[string]string{"s0": srvA.Addr(), "s1": srvB.Addr()},
		ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour,
		HeartbeatFrequency: time.Hour,
		NewClient: func(o *goredis.Options) *goredis.Client {
			cl := goredis.NewClient(o)
			if o.Addr == srvB.Addr() {
				cl.AddHook(&clockAheadHook{ms: 2000})
			}
			return cl
		},
	})
	t.Cleanup(func() { _ = ring.Close() })
	// A prefix whose invalidation channel lives on B, which never hangs.
	prefix := ringChannelOn(t, ring, srvB)
	kA, _ := keyOnShard(t, ring, prefix, srvA, 0)
	kB, _ := keyOnShard(t, ring, prefix, srvB, 0)
	bt, _ := newByteTier(t, ring, func(o *ByteTierOptions) { o.Prefix = prefix; o.Timeout = 100 * time.Millisecond })

	// Writes to both shards, answered: the estimate now follows B's clock.
	if err := bt.Set(ctx, []byte(kA), []byte("before"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := bt.Set(ctx, []byte(kB), []byte("b"), time.Hour); err != nil {
		t.Fatal(err)
	}
	before, _ := rawGet(t, adminA, prefix+kA)
	returned := writeHeldByHungServer(t, srvA, adminA, func() error { return bt.Set(ctx, []byte(kA), []byte("late"), time.Hour) })
	if raw, _ := rawGet(t, adminA, prefix+kA); raw != before {
		t.Errorf("a Set to shard A returned its error after %v (Timeout 100ms), yet A ran it when it resumed "+
			"and it landed: A holds %.40q, want %.40q as before it (the latest time came from shard B's clock)",
			returned.Round(time.Millisecond), raw, before)
	}
}

// The writes are scripts that call TIME (and a ByteTier's Delete TYPE and
// GET), which Redis checks against the user's ACL. The package doc said
// only that the user must be allowed EVAL and EVALSHA, and a user allowed
// those and what the writes had used before (SET, PUBLISH) failed every
// write with an error that named neither TIME nor the permission. The doc
// now names the commands, a user allowed them writes, and the error of one
// that is not says what is needed (and is the caller's, not the breaker's).
func TestWriteScriptsACL(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srv := private(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	user := func(name string, perms ...string) *ByteTier {
		args := append([]any{"acl", "setuser", name, "on", ">pw", "~*", "&*", "+@connection", "+subscribe", "+publish", "+get"}, anySlice(perms)...)
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
		cl := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), Username: name, Password: "pw", ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = cl.Close() })
		bt, _ := newByteTier(t, cl, nil)
		return bt
	}
	ok := user("documented", "+eval", "+evalsha", "+time", "+set", "+type")
	if err := ok.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
		t.Errorf("Set by a user allowed the documented commands: %v", err)
	}
	if _, err := ok.Delete(ctx, []byte("k")); err != nil {
		t.Errorf("Delete by a user allowed the documented commands: %v", err)
	}
	notime := user("notime", "+eval", "+evalsha", "+set", "+type")
	for range 10 { // more than the breaker's default failures
		err := notime.Set(ctx, []byte("k"), []byte("v"), time.Hour)
		if err == nil || !strings.Contains(err.Error(), "TIME") {
			t.Fatalf("Set by a user not allowed TIME = %v; want an error naming the commands needed", err)
		}
	}
	if st := notime.Stats(); st.Breaker != BreakerClosed {
		t.Errorf("breaker %v after writes the ACL refused; want closed (the refusal is the caller's)", st.Breaker)
	}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// cancelOn is a go-redis hook that calls cancel, once, when a command of
// a pipeline comes back as match wants (the caller gives up just then).
// cancel may be set after the hook is added, on the goroutine that then
// runs the call.
type cancelOn struct {
	match  func(goredis.Cmder) bool
	cancel context.CancelFunc
	fired  atomic.Bool
}

func (h *cancelOn) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *cancelOn) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *cancelOn) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if h.cancel != nil && h.match(c) && h.fired.CompareAndSwap(false, true) {
				h.cancel()
			}
		}
		return err
	}
}

// noScriptWrite matches a write script refused with NOSCRIPT.
func noScriptWrite(c goredis.Cmder) bool {
	return cmdName(c) == "set" && c.Err() != nil && strings.HasPrefix(c.Err().Error(), "NOSCRIPT")
}

// tooLateWrite matches a write script that answered it came too late.
func tooLateWrite(c goredis.Cmder) bool {
	cmd, ok := c.(*goredis.Cmd)
	if !ok || cmdName(c) != "set" {
		return false
	}
	vals, err := cmd.Slice()
	return err == nil && len(vals) == 2 && vals[0] == int64(writeTooLate)
}

// A Set whose caller cancelled ctx when its first attempt was refused
// with NOSCRIPT was held for the whole Timeout, though Redis answered at
// once: the resend that go-redis refused for the cancelled ctx was taken
// for a write "whose fate is unknown", and writeAndPublish slept until
// settle. It now waits only for a call that ran into its deadline; and
// since the resend keeps the call's deadline but not the caller's
// cancellation (TestCancelledSetResentAfterNoscript), the write is
// completed at once rather than abandoned.
func TestCancelledUnsentWriteReturnsAtOnce(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	cl := hungClient(t, srv)
	const timeout = 6 * time.Second
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = timeout })
	// A write answered (an estimate; later writes go by EVALSHA), then
	// the server forgets the scripts (a restart, a failover, SCRIPT FLUSH).
	if err := bt.Set(context.Background(), []byte("k"), []byte("before"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := admin.ScriptFlush(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl.AddHook(&cancelOn{match: noScriptWrite, cancel: cancel})
	done := make(chan error, 1)
	go func() { done <- bt.Set(ctx, []byte("k"), []byte("new"), time.Hour) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Set = %v; want nil: the write sent again, whole, once its caller had gone", err)
		} else if raw, _ := rawGet(t, admin, bt.prefix+"k"); !strings.Contains(raw, "new") {
			t.Errorf("Redis holds %q after the Set; want the new value", raw)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("Set still running 2 s after its caller cancelled it (nothing sent, Redis healthy; Timeout %v)", timeout)
		<-done
	}
}

// writeHeldByHungServer stops srv, runs write (which must fail: srv
// hangs), resumes srv, and waits until srv has run the write it held (one
// EVALSHA or EVAL more, counted through admin). It returns how long write
// took.
func writeHeldByHungServer(t *testing.T, srv *redistest.Server, admin *goredis.Client, write func() error) time.Duration {
	t.Helper()
	// By hash or whole: a script is sent whole the first time to a node.
	scriptCalls := func() int { return commandCalls(t, admin, "evalsha") + commandCalls(t, admin, "eval") }
	calls := scriptCalls()
	resume := stopProcess(t, srv)
	start := time.Now()
	if err := write(); err == nil {
		t.Fatal("a write to a Redis that hangs succeeded")
	}
	took := time.Since(start)
	resume()
	eventually(t, 10*time.Second, "Redis ran the write it held", func() bool { return scriptCalls() > calls })
	return took
}

// skewedCluster returns a client of c whose node client for master skewed
// sees its clock ms milliseconds ahead (clockAheadHook; negative: behind),
// with the deadline of each call alone ending it; tweak, if not nil,
// adjusts its options.
func skewedCluster(t *testing.T, c *redistest.Cluster, skewed int, ms int64, tweak func(*goredis.ClusterOptions)) *goredis.ClusterClient {
	t.Helper()
	addr := c.Nodes[skewed].Addr()
	o := &goredis.ClusterOptions{
		Addrs: c.Addrs(), ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour,
		NewClient: func(o *goredis.Options) *goredis.Client {
			nc := goredis.NewClient(o)
			if o.Addr == addr {
				nc.AddHook(&clockAheadHook{ms: ms})
			}
			return nc
		},
	}
	if tweak != nil {
		tweak(o)
	}
	cl := goredis.NewClusterClient(o)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// moveEmptySlot gives slot, which holds no key, from master from of c to
// master to, and tells every master; clients keep their old map of the
// slots until a redirection makes them reload it.
func moveEmptySlot(t *testing.T, c *redistest.Cluster, slot int64, from, to int) {
	t.Helper()
	ctx := context.Background()
	nodes := make([]*goredis.Client, len(c.Nodes))
	ids := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		nodes[i] = s.Client()
		t.Cleanup(func() { _ = nodes[i].Close() })
		ids[i] = nodes[i].ClusterMyID(ctx).Val()
	}
	steps := []struct {
		node int
		args []any
	}{
		{to, []any{"cluster", "setslot", slot, "importing", ids[from]}},
		{from, []any{"cluster", "setslot", slot, "migrating", ids[to]}},
		{to, []any{"cluster", "setslot", slot, "node", ids[to]}},
		{from, []any{"cluster", "setslot", slot, "node", ids[to]}},
	}
	for i := range c.Nodes {
		if i != from && i != to {
			steps = append(steps, struct {
				node int
				args []any
			}{i, []any{"cluster", "setslot", slot, "node", ids[to]}})
		}
	}
	for _, step := range steps {
		if err := nodes[step.node].Do(ctx, step.args...).Err(); err != nil {
			t.Fatalf("%v: %v", step.args, err)
		}
	}
}
