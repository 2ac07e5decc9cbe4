package redis

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// stopProcess stops srv (SIGSTOP: it hangs, its sockets still accept bytes)
// and returns a function that resumes it (SIGCONT), which also runs at the
// end of the test.
func stopProcess(t *testing.T, srv *redistest.Server) (resume func()) {
	t.Helper()
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume = func() {
		if !resumed {
			resumed = true
			_ = srv.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	return resume
}

// commandCalls returns how many times srv has run cmd (INFO commandstats).
func commandCalls(t *testing.T, admin *goredis.Client, cmd string) int {
	t.Helper()
	info, err := admin.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 0
}

// A loaded value's compare-and-set write that a hanging Redis (a stopped
// process, a long DEBUG SLEEP, a paused client) held was run by Redis when
// it resumed, however late: the client had given up on it after Timeout,
// but its bytes were on the wire. Resumed after the tombstone of a Delete
// that raced the load had expired, the script found the key absent, as the
// load had, and wrote the old value back with its full TTL, though a
// tombstone must outlive the loads it stops (Options.TombstoneTTL). The
// script now refuses a write older than TombstoneTTL - 2*Timeout by the
// server's clock too.
func TestHungRedisRunsNoLateLoadedWrite(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srv := private(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	// The CAS script cached on the server, as it is once any loaded value
	// has been written (so the writer's EVALSHA needs no EVAL).
	if err := admin.ScriptLoad(ctx, casScript).Err(); err != nil {
		t.Fatal(err)
	}
	wire := newWireWatch("evalsha")
	cl := goredis.NewClient(&goredis.Options{
		Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour, DialTimeout: time.Hour,
		Dialer: wire.dial,
	})
	t.Cleanup(func() { _ = cl.Close() })
	other := srv.Client()
	t.Cleanup(func() { _ = other.Close() })

	src := newSource()
	src.set("k", "old")
	gate := make(chan struct{})
	src.gate, src.started = gate, make(chan string, 1)
	const tombstoneTTL = 2 * time.Second
	tweak := func(o *Options[string]) {
		o.Timeout = 100 * time.Millisecond
		o.TombstoneTTL = tombstoneTTL // loads' writes older than 1.8s are dropped
		o.TTL = 10 * time.Hour
		o.Writers = 1
	}
	a := newTier(t, cl, src, tweak)
	b := newTier(t, other, newSource(), tweak)
	waitSubscribed(t, a, b)

	// a misses k in both tiers (Redis: no key) and loads it from the
	// source, which answers "old" once released.
	got := make(chan string, 1)
	go func() { v, _ := a.Get(ctx, "k"); got <- v }()
	<-src.started
	// The source changes and b deletes k: a tombstone for TombstoneTTL.
	src.mu.Lock()
	src.values["k"] = "new"
	src.gate, src.started = nil, nil
	src.mu.Unlock()
	if err := b.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()

	// Redis hangs; a's load returns "old" and its CAS write is sent (well
	// within TombstoneTTL-2*Timeout of the load's read), and times out.
	resume := stopProcess(t, srv)
	close(gate)
	<-got
	select {
	case <-wire.sent:
	case <-time.After(10 * time.Second):
		t.Fatalf("the loaded value's write was never sent (stats %+v)", a.Stats())
	}
	eventually(t, 10*time.Second, "the hung write timed out", func() bool { return a.Stats().L2WriteErrors == 1 })

	// Redis resumes after the tombstone has expired (a real wait: the
	// server's clock must pass the tombstone's expiry).
	time.Sleep(time.Until(deleted.Add(tombstoneTTL + 300*time.Millisecond)))
	resume()
	eventually(t, 10*time.Second, "Redis ran the EVALSHA it held", func() bool { return commandCalls(t, admin, "evalsha") >= 1 })

	if raw, ok := rawGet(t, admin, testPrefix(t)+"k"); ok {
		e := parseEntry(raw)
		t.Errorf("Redis holds an entry of kind %q for k, written by a load that read k before b's Delete and "+
			"reached Redis %v after it (the client gave up on it after Timeout 100ms); want no value "+
			"(the deleted value must not come back)", e.kind, time.Since(deleted).Round(100*time.Millisecond))
		if v, err := b.Get(ctx, "k"); err == nil && v == "old" {
			t.Errorf("b.Get(k) = %q from Redis; the source says %q and k was deleted after the load read it", v, "new")
		}
	}
}
