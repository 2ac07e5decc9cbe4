package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// The bound within which another instance's L1 must drop a key after a Set
// or Delete: Pub/Sub delivery on loopback takes well under a millisecond;
// the bound leaves room for -race on a busy 2-core machine.
const invalidationBound = 5 * time.Second

// B's L1 drops a key within a bound after A updates or deletes it, and A
// ignores its own messages (keeping its own new value in L1).
func TestInvalidationAcrossInstances(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		ca, cntA := b.client(t)
		cb, _ := b.client(t)
		src := newSource()
		src.set("k", "v1")
		a := newTier(t, ca, src, nil)
		bb := newTier(t, cb, src, nil)
		waitSubscribed(t, a, bb)
		mustGet(t, bb, "k", "v1") // B's L1 holds v1

		// Update.
		if err := a.Set(ctx, "k", "v2"); err != nil {
			t.Fatal(err)
		}
		eventually(t, invalidationBound, "B receives A's update", func() bool { return bb.Stats().InvalidationsReceived == 1 })
		eventually(t, invalidationBound, "A receives its own message back", func() bool { return a.Stats().InvalidationsIgnored == 1 })
		before := cntA.n.Load()
		mustGet(t, a, "k", "v2") // A's own message did not drop its L1 entry
		if n := cntA.n.Load() - before; n != 0 {
			t.Fatalf("A's Get after its own Set sent %d commands; its L1 entry was dropped", n)
		}
		mustGet(t, bb, "k", "v2") // from Redis
		if st := bb.Stats(); st.L2Hits != 1 {
			t.Fatalf("B: %d L2 hits, want 1 (the update read from Redis)", st.L2Hits)
		}

		// Delete.
		src.set("k", "v3")
		if err := a.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		eventually(t, invalidationBound, "B receives A's delete", func() bool { return bb.Stats().InvalidationsReceived == 2 })
		mustGet(t, bb, "k", "v3") // from the source: Redis holds a tombstone
		if n := src.count("k"); n != 2 {
			t.Fatalf("the source was called %d times, want 2", n)
		}
		st := bb.Stats()
		if st.InvalidationLagMax <= 0 || st.InvalidationLagMax > invalidationBound {
			t.Fatalf("B's invalidation lag %v (max %v): want in (0, %v]", st.InvalidationLag, st.InvalidationLagMax, invalidationBound)
		}
		t.Logf("invalidation lag: mean %v, max %v", st.InvalidationLag/time.Duration(st.InvalidationsReceived), st.InvalidationLagMax)
		if sa := a.Stats(); sa.InvalidationsSent != 2 || sa.InvalidationsReceived != 0 {
			t.Fatalf("A sent %d, received %d invalidations; want 2, 0", sa.InvalidationsSent, sa.InvalidationsReceived)
		}
	})
}

// A load that races a Delete (in another instance, or in the same one)
// neither stores its old value in L1 nor writes it to Redis.
func TestLoadRacingDeleteDoesNotResurrect(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, same := range []bool{false, true} {
			name := "other instance deletes"
			if same {
				name = "same instance deletes"
			}
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				ca, _ := b.client(t)
				cb, _ := b.client(t)
				src := newSource()
				src.set("k", "old")
				src.gate = make(chan struct{})
				src.firstGate = src.gate
				src.started = make(chan string, 1)
				a := newTier(t, ca, src, nil)
				bb := newTier(t, cb, src, nil)
				waitSubscribed(t, a, bb)
				deleter := a
				if same {
					deleter = bb
				}

				got := make(chan string, 1)
				go func() {
					v, err := bb.Get(ctx, "k")
					if err != nil {
						v = "error: " + err.Error()
					}
					got <- v
				}()
				<-src.started // B's load has read Redis (a miss) and the source ("old")
				src.mu.Lock()
				src.values["k"] = "new"
				src.gate, src.started = nil, nil // later loads go straight through
				src.mu.Unlock()
				if err := deleter.Delete(ctx, "k"); err != nil {
					t.Fatal(err)
				}
				if !same {
					eventually(t, invalidationBound, "B receives the delete", func() bool { return bb.Stats().InvalidationsReceived == 1 })
				}
				close(gateOf(t, b, src)) // let the old load finish
				if v := <-got; v != "old" {
					t.Fatalf("the Get that started the load got %q, want old (its load's result)", v)
				}
				eventually(t, 10*time.Second, "B's write of the old value refused", func() bool { return bb.Stats().L2WritesRejected == 1 })
				raw, ok := rawGet(t, cb, bb.prefix+"k")
				if !ok || parseEntry(raw).kind != kindTomb {
					t.Fatalf("Redis holds %q (present %v), want the tombstone", raw, ok)
				}
				mustGet(t, bb, "k", "new")
				mustGet(t, a, "k", "new")
			})
		}
	})
}

// gateOf returns the gate the first load is waiting on (saved before the
// source's gate was cleared).
func gateOf(t *testing.T, _ backend, src *source) chan struct{} {
	t.Helper()
	return src.firstGate
}

// Losing the subscription flushes L1; the subscription comes back by itself
// and invalidations work again.
func TestSubscriptionLost(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		ca, _ := b.client(t)
		cb, _ := b.client(t)
		src := newSource()
		src.set("k", "v1")
		a := newTier(t, ca, src, func(o *Options[string]) { o.ResubscribeDelay = 10 * time.Millisecond })
		bb := newTier(t, cb, src, func(o *Options[string]) { o.ResubscribeDelay = 10 * time.Millisecond })
		waitSubscribed(t, a, bb)
		mustGet(t, bb, "k", "v1")
		eventually(t, 10*time.Second, "the loaded value written to Redis", func() bool { return bb.Stats().L2Writes == 1 })
		reads := bb.Stats().L2Reads

		killed := 0
		for _, addr := range b.nodes {
			cl := goredis.NewClient(&goredis.Options{Addr: addr})
			n, err := cl.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
			_ = cl.Close()
			if err != nil {
				t.Fatal(err)
			}
			killed += int(n)
		}
		if killed < 2 {
			t.Fatalf("CLIENT KILL TYPE pubsub killed %d connections, want both instances'", killed)
		}
		eventually(t, 10*time.Second, "B notices the loss and subscribes again", func() bool {
			st := bb.Stats()
			return st.SubscriptionLosses == 1 && st.Subscribed && st.Subscriptions == 2
		})
		waitSubscribed(t, a)
		mustGet(t, bb, "k", "v1")
		if st := bb.Stats(); st.L2Reads != reads+1 {
			t.Fatalf("B's Get after the loss made %d Redis reads, want 1 (L1 was flushed)", st.L2Reads-reads)
		}
		if err := a.Set(ctx, "k", "v2"); err != nil {
			t.Fatal(err)
		}
		eventually(t, invalidationBound, "B receives A's update after the reconnect", func() bool { return bb.Stats().InvalidationsReceived == 1 })
		mustGet(t, bb, "k", "v2")
	})
}

// When a cluster moves the sharded invalidation channel's slot to another
// master (resharding, failover), the old owner unsubscribes every
// subscriber while their connections live on: that is a lost subscription,
// which the instances notice, subscribing again where the slot now is, so
// that invalidations reach them again.
func TestSubscriptionMovedWithSlot(t *testing.T) {
	cl, err := redistest.StartCluster(redisBin(t), 2)
	if err != nil {
		noRedis(t, err)
	}
	defer cl.Stop()
	ctx := context.Background()
	client := func() goredis.UniversalClient {
		c := goredis.NewUniversalClient(ClientDefaults(&goredis.UniversalOptions{Addrs: cl.Addrs(), IsClusterMode: true}))
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	src := newSource()
	src.set("k", "v1")
	tweak := func(o *Options[string]) {
		o.ResubscribeDelay = 10 * time.Millisecond
		o.Local.TTL = time.Minute
	}
	a := newTier(t, client(), src, tweak)
	b := newTier(t, client(), src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, a, "k", "v1")

	// Move the channel's slot (no key lives in it) to the other master.
	channel := testPrefix(t) + "invalidate"
	var nodes [2]*goredis.Client
	var ids [2]string
	for i, s := range cl.Nodes {
		nodes[i] = s.Client()
		defer nodes[i].Close()
		ids[i] = nodes[i].ClusterMyID(ctx).Val()
	}
	slot := int(nodes[0].ClusterKeySlot(ctx, channel).Val())
	from, to := 0, 1
	for _, sh := range nodes[0].ClusterShards(ctx).Val() {
		for _, r := range sh.Slots {
			if slot >= int(r.Start) && slot <= int(r.End) && slices.ContainsFunc(sh.Nodes, func(n goredis.Node) bool { return n.ID == ids[1] }) {
				from, to = 1, 0
			}
		}
	}
	for _, step := range []struct {
		node int
		args []any
	}{
		{to, []any{"cluster", "setslot", slot, "importing", ids[from]}},
		{from, []any{"cluster", "setslot", slot, "migrating", ids[to]}},
		{to, []any{"cluster", "setslot", slot, "node", ids[to]}},
		{from, []any{"cluster", "setslot", slot, "node", ids[to]}},
	} {
		if err := nodes[step.node].Do(ctx, step.args...).Err(); err != nil {
			t.Fatalf("%v: %v", step.args, err)
		}
	}
	eventually(t, 10*time.Second, "both instances lose the subscription and subscribe again", func() bool {
		sa, sb := a.Stats(), b.Stats()
		return sa.SubscriptionLosses == 1 && sa.Subscribed && sb.SubscriptionLosses == 1 && sb.Subscribed
	})
	if err := b.Set(ctx, "k", "v2"); err != nil {
		t.Fatal(err)
	}
	eventually(t, invalidationBound, "A receives B's update on the slot's new owner", func() bool { return a.Stats().InvalidationsReceived == 1 })
	mustGet(t, a, "k", "v2")
}

// While the subscription stays down, L1 is flushed every DegradedTTL, so
// that what it caches meanwhile, which may miss invalidations (a value this
// instance sets, a not-found answer), is no staler than DegradedTTL either.
func TestDegradedFlushesRepeat(t *testing.T) {
	srv := private(t)
	ctx := context.Background()
	admin := srv.Client()
	defer admin.Close()
	client := func() *goredis.Client {
		c := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	src := newSource()
	tweak := func(o *Options[string]) {
		o.DegradedTTL = 200 * time.Millisecond
		o.ResubscribeDelay = 10 * time.Millisecond
		o.Local.TTL = time.Minute
	}
	a := newTier(t, client(), src, tweak)
	b := newTier(t, client(), src, tweak)
	waitSubscribed(t, a, b)
	for _, c := range []*Cache[string]{a, b} { // a pooled connection each, kept
		if err := c.Set(ctx, "warm", "x"); err != nil {
			t.Fatal(err)
		}
	}
	// No new connection from now on: the Pub/Sub connections, killed,
	// cannot come back, while the pooled ones serve on.
	info := admin.Info(ctx, "clients").Val()
	var n int
	if _, err := fmt.Sscanf(info[strings.Index(info, "connected_clients:"):], "connected_clients:%d", &n); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "maxclients", fmt.Sprint(n-2)).Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.ConfigSet(ctx, "maxclients", "10000")
	if err := admin.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "A loses its subscription, and flushes L1 DegradedTTL later", func() bool {
		st := a.Stats()
		return st.SubscriptionLosses == 1 && st.Flushes >= 1
	})
	if err := a.Set(ctx, "k", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "nf"); !errors.Is(err, loading.ErrNotFound) {
		t.Fatalf("Get(nf): %v", err)
	}
	flushes := a.Stats().Flushes
	// B changes both; A misses the invalidations.
	if err := b.Set(ctx, "k", "b"); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "nf", "here"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "A flushes L1 again", func() bool { return a.Stats().Flushes > flushes })
	if a.Stats().Subscribed {
		t.Fatal("A subscribed again: the test no longer shows the repeated flush")
	}
	mustGet(t, a, "k", "b")
	mustGet(t, a, "nf", "here")
}

// An instance whose subscription never comes up (here its Redis user may
// use no Pub/Sub channel) misses invalidations from the start: it flushes
// L1 every DegradedTTL too, as after a loss.
func TestNeverSubscribedFlushes(t *testing.T) {
	srv := private(t)
	ctx := context.Background()
	admin := srv.Client()
	defer admin.Close()
	if err := admin.Do(ctx, "acl", "setuser", "nopubsub", "on", ">pw", "~*", "resetchannels", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	client := func(user, password string) *goredis.Client {
		c := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}, Username: user, Password: password}).Simple())
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	tweak := func(o *Options[string]) {
		o.DegradedTTL = 200 * time.Millisecond
		o.ResubscribeDelay = 10 * time.Millisecond
		o.Local.TTL = time.Minute
	}
	src := newSource()
	a := newTier(t, client("nopubsub", "pw"), src, tweak)
	b := newTier(t, client("", ""), src, tweak)
	waitSubscribed(t, b)
	if _, err := a.Get(ctx, "nf"); !errors.Is(err, loading.ErrNotFound) {
		t.Fatalf("Get(nf): %v", err)
	}
	flushes := a.Stats().Flushes
	if err := b.Set(ctx, "nf", "here"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "A flushes L1", func() bool { return a.Stats().Flushes > flushes })
	if st := a.Stats(); st.Subscribed || st.Subscriptions != 0 {
		t.Fatalf("A subscribed (%d times): the test no longer shows a subscription that never came up", st.Subscriptions)
	}
	mustGet(t, a, "nf", "here")
}

// orderHook watches one client's commands: whether a publish on channel
// is sent before the write of key has been answered. Until the publish
// comes, it holds the write's pipeline (for at most hold), so that a
// publish sent alongside the write shows.
type orderHook struct {
	key, channel   string
	hold           time.Duration
	armed          atomic.Bool
	writeDone      atomic.Bool
	publishedFirst atomic.Bool
	published      chan struct{}
	once           sync.Once
}

func (h *orderHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *orderHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		h.see([]goredis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *orderHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		if !h.see(cmds) {
			return next(ctx, cmds)
		}
		t := time.NewTimer(h.hold)
		defer t.Stop()
		select {
		case <-h.published:
		case <-t.C:
		}
		err := next(ctx, cmds)
		h.writeDone.Store(true)
		return err
	}
}

// see notes a publish among cmds and reports whether they write key.
func (h *orderHook) see(cmds []goredis.Cmder) (writes bool) {
	if !h.armed.Load() {
		return false
	}
	for _, c := range cmds {
		args := c.Args()
		if len(args) < 2 {
			continue
		}
		switch strings.ToLower(cmdName(c)) {
		case "publish", "spublish":
			if fmt.Sprint(args[1]) == h.channel {
				if !h.writeDone.Load() {
					h.publishedFirst.Store(true)
				}
				h.once.Do(func() { close(h.published) })
			}
		case "set":
			writes = writes || cmdKey(c) == h.key
		}
	}
	return writes
}

// A Set's invalidation never reaches the other instances before its write
// has landed: on a cluster, where the key and the channel live on
// different nodes, a pipeline would send both at once, and an instance
// that re-read the key on the message would keep the old value.
func TestInvalidationFollowsWrite(t *testing.T) {
	cl := cluster(t)
	prefix := testPrefix(t)
	ctx := context.Background()
	h := &orderHook{channel: prefix + "invalidate", hold: 2 * time.Second, published: make(chan struct{})}
	ca := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true, MaxRetries: 1,
		NewClient: func(o *goredis.Options) *goredis.Client {
			c := goredis.NewClient(o)
			c.AddHook(h)
			return c
		}})
	t.Cleanup(func() { _ = ca.Close() })
	cb, _ := backend{addrs: cl.Addrs()}.client(t)
	chMaster, err := ca.MasterForKey(ctx, h.channel)
	if err != nil {
		t.Fatal(err)
	}
	key := ""
	for i := 0; key == ""; i++ { // a key whose master is not the channel's
		m, err := ca.MasterForKey(ctx, prefix+fmt.Sprint("k", i))
		if err != nil {
			t.Fatal(err)
		}
		if m.Options().Addr != chMaster.Options().Addr {
			key = fmt.Sprint("k", i)
		}
	}
	h.key = prefix + key
	src := newSource()
	src.set(key, "v1")
	tweak := func(o *Options[string]) { o.Prefix = prefix; o.Timeout = 5 * time.Second }
	a := newTier(t, ca, src, tweak)
	b := newTier(t, cb, src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, b, key, "v1")
	h.armed.Store(true)
	if err := a.Set(ctx, key, "v2"); err != nil {
		t.Fatal(err)
	}
	if h.publishedFirst.Load() {
		t.Fatal("the invalidation was published before the write was answered")
	}
	eventually(t, invalidationBound, "B receives A's invalidation", func() bool { return b.Stats().InvalidationsReceived == 1 })
	mustGet(t, b, key, "v2")
}

// holdFirstSet holds the first SET of key until release.
type holdFirstSet struct {
	key              string
	entered, release chan struct{}
	held             atomic.Bool
}

func (h *holdFirstSet) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *holdFirstSet) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }

func (h *holdFirstSet) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if cmdName(c) == "set" && cmdKey(c) == h.key && !h.held.Swap(true) {
				close(h.entered)
				<-h.release
			}
		}
		return next(ctx, cmds)
	}
}

// Two Sets of one key in one instance leave both tiers with the same
// value: the second waits for the first's Redis write, so L1 and Redis
// keep the same last write (and the other instances with them).
func TestSetsOfOneKeyInOrder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, be backend) {
		ctx := context.Background()
		prefix := testPrefix(t)
		h := &holdFirstSet{key: prefix + "k", entered: make(chan struct{}), release: make(chan struct{})}
		ca, _ := be.client(t)
		ca.AddHook(h)
		cb, _ := be.client(t)
		tweak := func(o *Options[string]) { o.Prefix = prefix; o.Timeout = 5 * time.Second }
		a := newTier(t, ca, newSource(), tweak)
		b := newTier(t, cb, newSource(), tweak)
		waitSubscribed(t, a, b)

		first := make(chan error, 1)
		go func() { first <- a.Set(ctx, "k", "v1") }()
		<-h.entered // v1's Redis write is held
		second := make(chan error, 1)
		go func() { second <- a.Set(ctx, "k", "v2") }()
		// Give the second Set time to overtake, if it could (it must not:
		// the result below holds however long this is).
		select {
		case err := <-second:
			second <- err
		case <-time.After(500 * time.Millisecond):
		}
		close(h.release)
		for _, ch := range []chan error{first, second} {
			if err := <-ch; err != nil {
				t.Fatal(err)
			}
		}
		raw, _ := rawGet(t, cb, prefix+"k")
		eventually(t, invalidationBound, "B receives both invalidations", func() bool { return b.Stats().InvalidationsReceived == 2 })
		va, _ := a.Get(ctx, "k")
		vb, _ := b.Get(ctx, "k")
		if va != "v2" || vb != "v2" || parseEntry(raw).payload() != "v2" {
			t.Fatalf("A serves %q, B %q, Redis holds %q; want v2 everywhere", va, vb, parseEntry(raw).payload())
		}
	})
}
