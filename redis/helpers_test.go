package redis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/internal/leaktest"
	"github.com/cachekit/cachekit/loading"
	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// The tests that need Redis start their own servers (never the system's):
// one standalone server and one 3-master cluster, shared by the tests and
// started on first use, plus private servers for the fault tests. TestMain
// stops them all.
var servers struct {
	mu         sync.Mutex
	standalone *redistest.Server
	cluster    *redistest.Cluster
	private    []*redistest.Server
}

// TestMain stops the servers after the tests, and then fails them if
// goroutines they started are still running (see leaktest.Run).
func TestMain(m *testing.M) {
	os.Exit(leaktest.Run(m, stopServers))
}

// stopServers stops the servers the tests started.
func stopServers() {
	servers.mu.Lock()
	defer servers.mu.Unlock()
	if servers.standalone != nil {
		servers.standalone.Stop()
	}
	if servers.cluster != nil {
		servers.cluster.Stop()
	}
	for _, s := range servers.private {
		s.Stop()
	}
}

// noRedis skips the test, or fails it when CACHEKIT_REQUIRE_REDIS=1.
func noRedis(t *testing.T, err error) {
	t.Helper()
	if redistest.Required() {
		t.Fatalf("%s=1 but Redis cannot be used: %v (set %s to the redis-server binary)",
			redistest.EnvRequire, err, redistest.EnvServer)
	}
	t.Skip(redistest.SkipMessage(err))
}

func redisBin(t *testing.T) string {
	t.Helper()
	bin, err := redistest.Binary()
	if err != nil {
		noRedis(t, err)
	}
	return bin
}

// standalone returns the shared standalone server.
func standalone(t *testing.T) *redistest.Server {
	t.Helper()
	bin := redisBin(t)
	servers.mu.Lock()
	defer servers.mu.Unlock()
	if servers.standalone == nil {
		s, err := redistest.Start(bin)
		if err != nil {
			noRedis(t, err)
		}
		servers.standalone = s
	}
	return servers.standalone
}

// standaloneB is standalone for benchmarks.
func standaloneB(b *testing.B) *redistest.Server {
	b.Helper()
	bin, err := redistest.Binary()
	if err != nil {
		b.Skip(redistest.SkipMessage(err))
	}
	servers.mu.Lock()
	defer servers.mu.Unlock()
	if servers.standalone == nil {
		s, err := redistest.Start(bin)
		if err != nil {
			b.Skip(redistest.SkipMessage(err))
		}
		servers.standalone = s
	}
	return servers.standalone
}

// cluster returns the shared 3-master cluster.
func cluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	bin := redisBin(t)
	servers.mu.Lock()
	defer servers.mu.Unlock()
	if servers.cluster == nil {
		c, err := redistest.StartCluster(bin, 3)
		if err != nil {
			noRedis(t, err)
		}
		servers.cluster = c
	}
	return servers.cluster
}

// private starts a standalone server for this test alone (fault tests kill
// and restart it), with extra arguments for redis-server if given.
func private(t *testing.T, extra ...string) *redistest.Server {
	t.Helper()
	bin := redisBin(t)
	s, err := redistest.Start(bin, extra...)
	if err != nil {
		noRedis(t, err)
	}
	servers.mu.Lock()
	servers.private = append(servers.private, s)
	servers.mu.Unlock()
	t.Cleanup(s.Stop)
	return s
}

// backend is a Redis deployment that the tier suite runs against.
type backend struct {
	name  string
	addrs []string
	nodes []string // every server, for raw access (CLIENT KILL)
}

func backends(t *testing.T) []backend {
	s := standalone(t)
	c := cluster(t)
	return []backend{
		{name: "standalone", addrs: []string{s.Addr()}, nodes: []string{s.Addr()}},
		{name: "cluster", addrs: c.Addrs(), nodes: c.Addrs()},
	}
}

// forEachBackend runs fn against the standalone server and the cluster.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			checkLeaks(t)
			fn(t, b)
		})
	}
}

// commandCounter is a go-redis hook that counts the commands a client
// sends (pipelines count each of their commands), but for the HELLO that
// opens each new connection: the subscription's reconnects send it
// through the client's hooks whenever Redis drops or accepts a
// connection (TestRedisKilled counted one, from a reconnect racing the
// kill, as an L1 hit's command in about 1 run in 5 on a loaded machine),
// and a command of the cache's own is counted anyway.
type commandCounter struct{ n atomic.Int64 }

func (c *commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "hello" {
			return next(ctx, cmd)
		}
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// client returns a client for b (a ClusterClient for the cluster), with a
// command counter, closed when the test ends.
func (b backend) client(t *testing.T) (goredis.UniversalClient, *commandCounter) {
	return b.clientB(t)
}

func (b backend) clientB(t testing.TB) (goredis.UniversalClient, *commandCounter) {
	t.Helper()
	o := ClientDefaults(&goredis.UniversalOptions{Addrs: b.addrs, IsClusterMode: len(b.addrs) > 1})
	cl := goredis.NewUniversalClient(o)
	cnt := &commandCounter{}
	cl.AddHook(cnt)
	t.Cleanup(func() { _ = cl.Close() })
	return cl, cnt
}

// source is a test Loader over a map, counting calls. A gate, if set, is
// waited for by each call after it has been announced on started.
type source struct {
	mu      sync.Mutex
	values  map[string]string
	calls   map[string]int
	total   atomic.Int64
	gate    chan struct{}
	started chan string
	// firstGate keeps the gate given to newGatedSource.
	firstGate chan struct{}
}

func newSource() *source {
	return &source{values: map[string]string{}, calls: map[string]int{}}
}

func (s *source) set(k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[k] = v
}

func (s *source) count(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[k]
}

func (s *source) Load(ctx context.Context, k string) (string, error) {
	s.mu.Lock()
	s.calls[k]++
	v, ok := s.values[k]
	gate, started := s.gate, s.started
	s.mu.Unlock()
	s.total.Add(1)
	if started != nil {
		started <- k
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if !ok {
		return "", loading.ErrNotFound
	}
	return v, nil
}

// newTier returns a Cache[string] on client with a prefix unique to the
// test, closed when the test ends. tweak adjusts the options.
func newTier(t *testing.T, client goredis.UniversalClient, src loading.Loader[string, string], tweak func(*Options[string])) *Cache[string] {
	t.Helper()
	o := Options[string]{
		Client:  client,
		Loader:  src,
		Prefix:  testPrefix(t),
		Timeout: time.Second, // generous: -race on a busy 2-core machine
	}
	o.Local.MaxEntries = 10_000
	if tweak != nil {
		tweak(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// testPrefix is a key prefix unique to the test and to this run of it
// (-count, and servers shared by the tests), and so an invalidation channel
// of its own.
// Every instance a test creates shares it.
func testPrefix(t *testing.T) string {
	if p, ok := prefixes.Load(t); ok {
		return p.(string)
	}
	p := fmt.Sprintf("t:%s:%d:%d:", strings.ReplaceAll(t.Name(), "/", ":"), runID, prefixSeq.Add(1))
	prefixes.Store(t, p)
	t.Cleanup(func() { prefixes.Delete(t) })
	return p
}

var (
	runID     = time.Now().UnixNano()
	prefixSeq atomic.Int64
	prefixes  sync.Map // *testing.T → its prefix
)

// waitSubscribed waits until every cache's subscription is confirmed.
func waitSubscribed(t *testing.T, caches ...*Cache[string]) {
	t.Helper()
	for _, c := range caches {
		eventually(t, 10*time.Second, "subscription confirmed", func() bool { return c.Stats().Subscribed })
	}
}

// eventually polls cond until it holds or the deadline passes. It is used
// only for events that cross a real network (Redis Pub/Sub deliveries,
// asynchronous writes, reconnects), whose timing the test cannot control;
// the deadline is a generous bound, never a sleep the test relies on.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// mustGet fails the test unless c.Get returns want.
// setKeys sets k0 … k(n-1) to v0 … v(n-1) through c (both tiers).
func setKeys(t *testing.T, c *Cache[string], n int) {
	t.Helper()
	for i := range n {
		if err := c.Set(context.Background(), fmt.Sprint("k", i), fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
}

func mustGet(t *testing.T, c *Cache[string], key, want string) {
	t.Helper()
	got, err := c.Get(context.Background(), key)
	if err != nil || got != want {
		t.Fatalf("Get(%q) = %q, %v; want %q", key, got, err, want)
	}
}

// checkLeaks makes the test fail if goroutines of this module or of
// cachekit are still running when the test's other cleanups (which close
// the caches) have run.
func checkLeaks(t *testing.T) {
	t.Cleanup(func() {
		var leaked string
		deadline := time.Now().Add(5 * time.Second)
		for {
			leaked = ourGoroutines()
			if leaked == "" || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if leaked != "" {
			t.Errorf("goroutines left after Close:\n%s", leaked)
		}
	})
}

// ourGoroutines returns the stacks of running goroutines that are in code of
// this module, of loading or of the core cache (but not the test's own).
func ourGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "testing.(*T).Run") ||
			strings.Contains(g, "ourGoroutines") || strings.Contains(g, "redistest.") {
			continue
		}
		if strings.Contains(g, "github.com/cachekit/cachekit") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// rawGet reads a key's raw bytes from Redis.
func rawGet(t *testing.T, client goredis.UniversalClient, key string) (string, bool) {
	t.Helper()
	v, err := client.Get(context.Background(), key).Result()
	if err == goredis.Nil {
		return "", false
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return v, true
}

// pipeHold is a go-redis hook that holds the first pipeline whose
// commands include one named cmd until release is closed: a Redis write
// (a Set's or Delete's pipeline) that takes as long as the test wants.
type pipeHold struct {
	cmd     string
	entered chan struct{} // closed when the pipeline is held
	release chan struct{}
	once    sync.Once
}

func newPipeHold(cmd string) *pipeHold {
	return &pipeHold{cmd: cmd, entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *pipeHold) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *pipeHold) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *pipeHold) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if cmdName(c) == h.cmd {
				held := false
				h.once.Do(func() { held = true })
				if held {
					close(h.entered)
					<-h.release
				}
				break
			}
		}
		return next(ctx, cmds)
	}
}

// panicHook fails the first GET with an error, panics on the second, and
// passes the rest through.
type panicHook struct{ n atomic.Int32 }

func (h *panicHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *panicHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "get" {
			switch h.n.Add(1) {
			case 1:
				cmd.SetErr(errors.New("injected network failure"))
				return cmd.Err()
			case 2:
				panic("hook panics")
			}
		}
		return next(ctx, cmd)
	}
}
func (h *panicHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// lineCounter is a log destination that counts the lines holding a
// string.
type lineCounter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineCounter) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), sub)
}

// sloppyCodec ignores dst (a common mistake: return json.Marshal(v)).
type sloppyCodec struct{}

func (sloppyCodec) Name() string                                { return "sloppy" }
func (sloppyCodec) Append(dst []byte, v string) ([]byte, error) { return []byte(v), nil }
func (sloppyCodec) Decode(b []byte) (string, error)             { return string(b), nil }

// standaloneClient returns a client of the shared standalone server
// (context deadlines enabled), closed when the test ends.
func standaloneClient(t *testing.T) *goredis.Client {
	t.Helper()
	s := standalone(t)
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// cmdName is the name of a command, but for the writes' scripts, named
// "set" (writeScript) and "delete" (a ByteTier's deleteScript): tests
// watch for them as they watched for the SET and DEL these replaced.
func cmdName(c goredis.Cmder) string {
	n := strings.ToLower(c.Name())
	if args := c.Args(); (n == "evalsha" || n == "eval") && len(args) > 1 {
		switch fmt.Sprint(args[1]) {
		case writeLua.Hash(), writeScript:
			return "set"
		case deleteLua.Hash(), deleteScript:
			return "delete"
		}
	}
	return c.Name()
}

// cmdKey is the key of a command: its first argument, or a script's first
// key.
func cmdKey(c goredis.Cmder) string {
	args := c.Args()
	if n := strings.ToLower(c.Name()); n == "evalsha" || n == "eval" {
		if len(args) > 3 {
			return fmt.Sprint(args[3])
		}
		return ""
	}
	if len(args) > 1 {
		return fmt.Sprint(args[1])
	}
	return ""
}
