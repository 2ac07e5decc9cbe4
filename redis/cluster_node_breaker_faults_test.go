package redis

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// cancelOnLoadKey carries, in a caller's context, the function that
// cancels it: the test's cluster map loader cancels the caller once the
// load is on the wire to a hung server.
type cancelOnLoadKey struct{}

// cancelOnWrite is a connection that calls the function armed in f
// (once) after its first write: a command is then on the wire.
type cancelOnWrite struct {
	net.Conn
	f *atomic.Pointer[context.CancelFunc]
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if f := c.f.Swap(nil); f != nil {
		(*f)()
	}
	return n, err
}

// hungMapLoad returns a cluster client whose map of the slots cannot be
// loaded ("cluster unreachable"), except by the first load asked with a
// context that carries cancelOnLoadKey (getCancelledInMapLoad's): that one
// sends CLUSTER SLOTS to bh, a black hole, cancels its caller once the
// command is on the wire, ends at its context's deadline (go-redis ignores
// the cancellation) or when bh is closed, and then closes loadDone.
func hungMapLoad(t *testing.T) (cl *goredis.ClusterClient, bh *redistest.BlackHole, loadDone <-chan struct{}) {
	t.Helper()
	bh, err := redistest.NewBlackHole()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bh.Close)
	var armed atomic.Pointer[context.CancelFunc]
	hung := goredis.NewClient(&goredis.Options{
		Addr: bh.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			cn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &cancelOnWrite{Conn: cn, f: &armed}, nil
		},
	})
	t.Cleanup(func() { _ = hung.Close() })
	done := make(chan struct{})
	var loads atomic.Int32
	cl = goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs: []string{bh.Addr()}, ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour,
		ClusterSlots: func(ctx context.Context) ([]goredis.ClusterSlot, error) {
			cancel, _ := ctx.Value(cancelOnLoadKey{}).(context.CancelFunc)
			if cancel == nil || loads.Add(1) > 1 {
				// The subscriber's and go-redis's background loads:
				// the cluster cannot be reached.
				return nil, errors.New("cluster unreachable")
			}
			defer close(done)
			armed.Store(&cancel)
			if err := hung.Do(ctx, "cluster", "slots").Err(); err != nil {
				return nil, err
			}
			return nil, errors.New("a black hole answered")
		},
	})
	t.Cleanup(func() { _ = cl.Close() })
	return cl, bh, done
}

// getCancelledInMapLoad starts bt.Get of "k" (bt on hungMapLoad's client)
// with a context that the map load cancels once it is on the wire, waits
// for that, and returns the channel of Get's error.
func getCancelledInMapLoad(t *testing.T, bt *ByteTier) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ctx = context.WithValue(ctx, cancelOnLoadKey{}, cancel)
	done := make(chan error, 1)
	go func() { _, _, _, err := bt.Get(ctx, nil, []byte("k")); done <- err }()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the cluster's map was never asked for")
	}
	return done
}

// With one breaker per node, ByteTier.Get asked the cluster client for the
// key's master (core.nodeAddr -> ClusterClient.MasterForKey) on the
// caller's goroutine, before detach. While the client had no map of the
// slots yet (the cluster hung when the process started, or a network
// partition), MasterForKey loaded it with CLUSTER SLOTS, and go-redis
// honours the context's deadline but not its cancellation: a caller who
// cancelled was held until Options.Timeout, although Get returns "at once,
// even if Redis hangs" when ctx ends. Until a call has succeeded (the map
// is known) a caller whose context can be cancelled asks for the node on
// a goroutine of its own, and returns when its context ends. (Here the
// map is loaded through ClusterOptions.ClusterSlots from a hung server;
// only the Get's own load reaches it.)
func TestByteTierGetReturnsOnCancelWhileClusterMapLoadHangs(t *testing.T) {
	checkLeaks(t)
	cl, _, _ := hungMapLoad(t)
	const timeout = 3 * time.Second
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = timeout })
	start := time.Now()
	done := getCancelledInMapLoad(t, bt)
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Get after its context was cancelled: %v; want an error wrapping context.Canceled", err)
		}
	case <-time.After(time.Second):
		err := <-done // it ends at Timeout: wait for it before Close
		t.Fatalf("Get still running 1s after its context was cancelled; it returned %v after %v (Timeout %v): "+
			"held by the load of the cluster's map (nodeAddr) on the caller's goroutine", err, time.Since(start).Round(time.Millisecond), timeout)
	}
}

// Stats.Breaker, the most severe state of the nodes' breakers, stayed open
// for good after a failover: a killed master's breaker opened, its replica
// took over the slots, every later call went to the replica and
// succeeded, but no call reached the dead address any more, so no probe
// ever closed its breaker, and an alert on Stats.Breaker never cleared.
// The state of a breaker that no call has asked for a minute (or twice
// BreakerOpenFor) while not closed is now left out.
func TestStatsBreakerClosesAfterFailover(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	keyTag := "{" + testPrefix(t) + "k}" // the key's slot: its master dies
	c := startFailoverCluster(t, keyTag)
	prefix := c.survivingChannel(t) // its invalidation channel's master survives
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	cl := c.client(t)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.BreakerFailures = 1
		o.Clock = clock
	})
	if err := bt.Set(ctx, []byte(keyTag), []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	dead := c.nodes[c.owner].Addr()
	c.nodes[c.owner].Kill()
	c.dead[c.owner] = true
	// The client still maps the slot to the dead master: its breaker opens.
	if err := bt.Set(ctx, []byte(keyTag), []byte("v2"), time.Hour); err == nil {
		t.Fatal("a Set to a master just killed succeeded")
	}
	if st := bt.Stats(); st.Breaker != BreakerOpen {
		t.Fatalf("setup: Stats.Breaker %v after a failure to the dead master; want open", st.Breaker)
	}
	c.converge(t, c.replica)
	// The client learns the new map (as go-redis does on its own: on a
	// failure's ReloadState, a MOVED, or its periodic reload) before the
	// dead master's breaker lets a probe through.
	promoted := c.nodes[c.replica].Addr()
	eventually(t, 10*time.Second, "the client maps the key's slot to the promoted replica", func() bool {
		cl.ReloadState(ctx)
		n, err := cl.MasterForKey(ctx, prefix+keyTag)
		return err == nil && n.Options().Addr == promoted
	})
	if a := bt.nodeAddr(ctx, ctx, prefix+keyTag); a == dead {
		t.Fatalf("setup: the tier still routes the key to %s", dead)
	}
	for range 3 {
		clock.add(time.Minute)
		if err := bt.Set(ctx, []byte(keyTag), []byte("v4"), time.Hour); err != nil {
			t.Fatal(err)
		}
		if v, _, found, err := bt.Get(ctx, nil, []byte(keyTag)); err != nil || !found || string(v) != "v4" {
			t.Fatalf("Get = %q, %v, %v; want v4", v, found, err)
		}
	}
	if st := bt.Stats(); st.Breaker != BreakerClosed {
		t.Errorf("Stats.Breaker %v (BreakerOpens %d) after the cluster healed and every call succeeds; want closed: "+
			"the breaker of the dead master's address, which no call reaches any more, stays open for good",
			st.Breaker, st.BreakerOpens)
	}
}

// On a cluster, the publication of a write's invalidation (sent after the
// write, to the master of the channel's slot) was reported to the breaker
// of the write's key's master. When the master holding the channel hung,
// every Set failed its publication, each healthy master's breaker opened
// after BreakerFailures Sets, and the reads of the healthy masters' keys
// then failed at once with ErrUnavailable: one hung master stopped the
// others' calls again. The publication now goes through the breaker of the
// channel's node.
func TestHungChannelMasterDoesNotOpenHealthyMastersBreaker(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	// A prefix whose invalidation channel lives on master 0, which will
	// hang; the key lives on master 1, which stays healthy.
	prefix := channelOn(t, c, 0)
	healthy := keyOn(t, c, prefix, 1)
	cl := clusterClient(t, c)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.Timeout = 200 * time.Millisecond
		o.BreakerFailures = 2
		o.Clock = clock
	})
	if err := bt.Set(ctx, []byte(healthy), []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	stopProcess(t, c.Nodes[0])
	for i := range 2 {
		// The write lands on master 1; its publication times out on
		// master 0.
		if err := bt.Set(ctx, []byte(healthy), []byte("v2"), time.Hour); err == nil || errors.Is(err, ErrUnavailable) {
			t.Fatalf("Set %d while the channel's master hangs: %v; want its publication's timeout", i+1, err)
		}
	}
	v, _, found, err := bt.Get(ctx, nil, []byte(healthy))
	if err != nil || !found || string(v) != "v2" {
		t.Errorf("Get of a key of healthy master 1 while only master 0 (the channel's) hangs = %q, %v, %v; want %q from Redis "+
			"(Stats.Breaker %v): the publications' timeouts on master 0 opened master 1's breaker",
			v, found, err, "v2", bt.Stats().Breaker)
	}
}
