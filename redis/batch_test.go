package redis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// gate is a go-redis hook that holds the GET of one key until released,
// counts the GETs sent, and records the GETs of every pipeline that has
// some (the Cache's own commands, such as its health checks, are left
// out).
type gate struct {
	key     string // the full Redis key whose GET is held
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	gets    atomic.Int64

	mu        sync.Mutex
	pipelines [][]string // the keys of the GETs of each pipeline
}

func newGate(key string) *gate {
	return &gate{key: key, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (g *gate) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "get" {
			g.gets.Add(1)
			if fmt.Sprint(cmd.Args()[1]) == g.key {
				g.once.Do(func() { close(g.entered) })
				<-g.release
			}
		}
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		var keys []string
		for _, c := range cmds {
			if cmdName(c) == "get" {
				keys = append(keys, fmt.Sprint(c.Args()[1]))
			}
		}
		if len(keys) > 0 {
			g.gets.Add(int64(len(keys)))
			g.mu.Lock()
			g.pipelines = append(g.pipelines, keys)
			g.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

func (g *gate) seen() [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.pipelines)
}

// queuedReads returns how many reads wait for a round trip.
func queuedReads[V any](c *Cache[V]) int {
	r := c.reads
	r.mu.Lock()
	defer r.mu.Unlock()
	q := len(r.one.queue)
	for _, n := range r.nodes {
		q += len(n.queue)
	}
	return q
}

// getAsync runs c.Get(ctx, key) on a goroutine; the result arrives on the
// channel.
func getAsync(c *Cache[string], ctx context.Context, key string) <-chan error {
	done := make(chan error, 1)
	go func() {
		v, err := c.Get(ctx, key)
		if err == nil && v != "v"+key[1:] {
			err = fmt.Errorf("Get(%q) = %q, want %q", key, v, "v"+key[1:])
		}
		done <- err
	}()
	return done
}

// With one round trip allowed and it held, cold reads queue; when it comes
// back, the queued reads go together in one pipeline, and every caller gets
// its own value. (On a cluster, round trips and queues are per master: a
// hash tag in the prefix puts every key on one.)
func TestReadsCoalesce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		client, _ := b.client(t)
		src := newSource()
		const n = 10
		writer := newTier(t, client, src, func(o *Options[string]) { o.Prefix = "{" + testPrefix(t) + "}" })
		setKeys(t, writer, n)
		c := newTier(t, client, src, func(o *Options[string]) {
			o.Prefix = writer.prefix
			o.ReadsInFlight = 1
		})
		g := newGate(c.prefix + "k0")
		client.AddHook(g)

		first := getAsync(c, ctx, "k0")
		<-g.entered
		var rest []<-chan error
		for i := 1; i < n; i++ {
			rest = append(rest, getAsync(c, ctx, fmt.Sprint("k", i)))
		}
		eventually(t, 10*time.Second, "the other reads queued", func() bool { return queuedReads(c) == n-1 })
		if p := g.seen(); len(p) != 0 {
			t.Fatalf("pipelines sent while the round trip was held: %v", p)
		}
		close(g.release)
		for _, done := range append(rest, first) {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		p := g.seen()
		if len(p) != 1 || len(p[0]) != n-1 {
			t.Fatalf("pipelines %v: want one of the %d queued GETs", p, n-1)
		}
		if st := c.Stats(); st.L2Reads != n || st.L2Hits != n || st.Loads != 0 {
			t.Fatalf("stats %+v: want %d L2 reads, all hits, no loads", st, n)
		}
	})
}

// A caller whose context ends while its read is queued returns at once
// with the context's error; the queued read is still answered later, and
// nothing is left running after Close.
func TestReadsQueuedCallerGivesUp(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	client, _ := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	src := newSource()
	src.set("k1", "v1")
	c := newTier(t, client, src, func(o *Options[string]) { o.ReadsInFlight = 1 })
	g := newGate(c.prefix + "k0")
	client.AddHook(g)
	src.set("k0", "v0")

	first := getAsync(c, ctx, "k0")
	<-g.entered
	gctx, cancel := context.WithCancel(ctx)
	gaveUp := getAsync(c, gctx, "k1")
	eventually(t, 10*time.Second, "k1 queued", func() bool { return queuedReads(c) == 1 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("Get of a queued read after cancel: %v, want context.Canceled", err)
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	mustGet(t, c, "k1", "v1")
}

// A queued read that waited past its Timeout fails without being sent; the
// others of its batch are sent.
func TestReadsExpiredInQueue(t *testing.T) {
	client, _ := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	c := newTier(t, client, newSource(), nil)
	g := newGate("")
	client.AddHook(g)
	now := time.Now()
	stale := &queuedRead{key: c.prefix + "stale", start: now.Add(-2 * c.timeout), done: make(chan struct{})}
	fresh := &queuedRead{key: c.prefix + "fresh", start: now, done: make(chan struct{})}
	c.reads.pipeline([]*queuedRead{stale, fresh})
	<-stale.done
	<-fresh.done
	if !errors.Is(stale.res.err, context.DeadlineExceeded) {
		t.Fatalf("stale read: %v, want context.DeadlineExceeded", stale.res.err)
	}
	if !errors.Is(fresh.res.err, goredis.Nil) {
		t.Fatalf("fresh read of an absent key: %v, want redis.Nil", fresh.res.err)
	}
	if n := g.gets.Load(); n != 1 {
		t.Fatalf("%d GETs sent, want 1 (the fresh read's)", n)
	}
}

// With coalescing off, a slow read holds nobody: the other reads go while
// it is still held, and no pipeline is sent.
func TestReadsNoCoalescing(t *testing.T) {
	ctx := context.Background()
	client, _ := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	src := newSource()
	for i := range 5 {
		src.set(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	c := newTier(t, client, src, func(o *Options[string]) { o.ReadsInFlight = -1 })
	g := newGate(c.prefix + "k0")
	client.AddHook(g)
	first := getAsync(c, ctx, "k0")
	<-g.entered
	for i := 1; i < 5; i++ {
		mustGet(t, c, fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if p := g.seen(); len(p) != 0 {
		t.Fatalf("pipelines %v sent with ReadsInFlight < 0", p)
	}
}

// Redis killed while reads are queued: the pipeline fails, and every
// queued caller gets its value from the loader instead.
func TestReadsPipelineFails(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	src := newSource()
	for i := range 6 {
		src.set(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	c, _ := faultTier(t, srv.Addr(), src, time.Second, time.Second)
	c.reads.maxInFlight = 1
	waitSubscribed(t, c)
	g := newGate(c.prefix + "k0")
	c.client.AddHook(g)
	ctx := context.Background()
	first := getAsync(c, ctx, "k0")
	<-g.entered
	var rest []<-chan error
	for i := 1; i < 6; i++ {
		rest = append(rest, getAsync(c, ctx, fmt.Sprint("k", i)))
	}
	eventually(t, 10*time.Second, "the other reads queued", func() bool { return queuedReads(c) == 5 })
	srv.Kill()
	close(g.release)
	for _, done := range append(rest, first) {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.L2Errors+st.L2Skipped != 6 || st.Loads != 6 {
		t.Fatalf("stats %+v: want 6 failed or skipped L2 reads and 6 loads", st)
	}
}

// One coalesced pipeline holding a value, a tombstone, foreign bytes, a
// list (WRONGTYPE), an absent key and a value of another fingerprint:
// every caller gets its own answer, each counted once.
func TestReadsPipelineMixedEntries(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		client, _ := b.client(t)
		src := newSource()
		for _, k := range []string{"k0", "ka", "kb", "kc", "kd", "ke", "kf"} {
			src.set(k, "src-"+k)
		}
		c := newTier(t, client, src, func(o *Options[string]) {
			o.Prefix = "{" + testPrefix(t) + "}" // one master of a cluster: its round trips and queue are its own
			o.ReadsInFlight = 1
		})
		other := newTier(t, client, src, func(o *Options[string]) { o.Prefix = c.prefix; o.Version = "other" })
		p := c.prefix
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(other.Set(ctx, "k0", "x")) // k0: incompatible too; it's the held one
		must(c.core.client.Set(ctx, p+"kc", "foreign bytes", time.Minute).Err())
		must(client.RPush(ctx, p+"kd", "x").Err())
		must(other.Set(ctx, "kf", "other version"))
		w := newTier(t, client, src, func(o *Options[string]) { o.Prefix = c.prefix })
		must(w.Set(ctx, "ka", "redis-ka"))
		must(w.Set(ctx, "kb", "b"))
		must(w.Delete(ctx, "kb"))
		waitSubscribed(t, c)
		g := newGate(p + "k0")
		client.AddHook(g)
		type res struct {
			k, v string
			err  error
		}
		out := make(chan res, 7)
		get := func(k string) {
			go func() { v, err := c.Get(ctx, k); out <- res{k, v, err} }()
		}
		get("k0")
		<-g.entered
		for _, k := range []string{"ka", "kb", "kc", "kd", "ke", "kf"} {
			get(k)
		}
		eventually(t, 10*time.Second, "queued", func() bool { return queuedReads(c) == 6 })
		close(g.release)
		want := map[string]string{"k0": "src-k0", "ka": "redis-ka", "kb": "src-kb", "kc": "src-kc", "kd": "src-kd", "ke": "src-ke", "kf": "src-kf"}
		for range 7 {
			r := <-out
			if r.err != nil || r.v != want[r.k] {
				t.Errorf("Get(%s) = %q, %v; want %q", r.k, r.v, r.err, want[r.k])
			}
		}
		st := c.Stats()
		if st.L2Reads != 7 || st.L2Hits != 1 || st.L2Misses != 2 || st.L2Incompatible != 4 || st.L2Errors != 0 || st.Loads != 6 {
			t.Fatalf("stats: reads %d hits %d misses %d incompatible %d errors %d loads %d; want 7 1 2 4 0 6",
				st.L2Reads, st.L2Hits, st.L2Misses, st.L2Incompatible, st.L2Errors, st.Loads)
		}
	})
}

// GetMany with every key twice, some in Redis (one a tombstone), some
// only in the source: one read and at most one load per key.
func TestGetManyDuplicateKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		client, _ := b.client(t)
		src := newSource()
		for i := range 20 {
			src.set(fmt.Sprint("k", i), fmt.Sprint("src", i))
		}
		w := newTier(t, client, src, nil)
		setKeys(t, w, 10)
		if err := w.Delete(ctx, "k3"); err != nil {
			t.Fatal(err)
		}
		c := newTier(t, client, src, func(o *Options[string]) { o.Prefix = w.prefix; o.ReadsInFlight = 1 })
		var keys []string
		for i := range 20 {
			keys = append(keys, fmt.Sprint("k", i), fmt.Sprint("k", i))
		}
		m, err := c.GetMany(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			want := fmt.Sprint("v", i)
			if i >= 10 || i == 3 {
				want = fmt.Sprint("src", i)
			}
			if m[fmt.Sprint("k", i)] != want {
				t.Errorf("k%d = %q want %q", i, m[fmt.Sprint("k", i)], want)
			}
		}
		st := c.Stats()
		if st.L2Reads != 20 || st.L2Hits != 9 || st.L2Misses != 11 || st.Loads != 11 {
			t.Fatalf("reads %d hits %d misses %d loads %d", st.L2Reads, st.L2Hits, st.L2Misses, st.Loads)
		}
	})
}
