package redis

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cachekit/cachekit/redis/internal/redistest"
)

// heldCache returns a Cache on a private server, subscribed, with a
// pooled connection ready, and then holds the server (pause): every
// command sent afterwards waits. The client's own timeouts are far longer
// than the tests, so only timeout (Options.Timeout) or a caller's
// context's deadline can end a call. wire signals when a command named
// cmd is on the wire.
func heldCache(t *testing.T, cmd string, timeout time.Duration) (*Cache[string], *wireWatch) {
	srv := private(t)
	wire := newWireWatch(cmd)
	cl := heldClient(t, srv, wire)
	src := newSource()
	src.set("k", "v")
	c, err := New(Options[string]{
		Client: cl, Loader: src, Prefix: testPrefix(t),
		Timeout: timeout, TombstoneTTL: 3 * time.Hour, TTL: 10 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	waitSubscribed(t, c)
	pause(t, srv, cl)
	return c, wire
}

// heldClient returns a client of srv whose connections report to wire,
// with timeouts of an hour; its cleanup closes the client.
func heldClient(t *testing.T, srv *redistest.Server, wire *wireWatch) *goredis.Client {
	cl := goredis.NewClient(&goredis.Options{
		Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour, DialTimeout: time.Hour,
		Dialer: wire.dial,
	})
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// pause readies a pooled connection of cl (handshake done, so that the
// next command is written at once rather than held in a new connection's
// HELLO), and then holds srv (CLIENT PAUSE ALL) for ten minutes. Its
// cleanup, which runs before those of the tiers made before it, kills
// srv, so that the calls it holds end and Close can return.
func pause(t *testing.T, srv *redistest.Server, cl *goredis.Client) {
	t.Helper()
	t.Cleanup(srv.Kill)
	if err := cl.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	admin := srv.Client()
	defer admin.Close()
	if err := admin.Do(context.Background(), "client", "pause", "600000", "all").Err(); err != nil {
		t.Fatal(err)
	}
}

// cancelWhenSent runs call with a context that it cancels once the
// command is on the wire to the held server, and returns call's error, or
// fails the test if call is still running 10s after the cancellation.
func cancelWhenSent(t *testing.T, wire *wireWatch, call func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	select {
	case <-wire.sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the command was never written")
	}
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after its context was cancelled: held by the hanging Redis call (until Options.Timeout)")
		return nil
	}
}

// A Redis that hangs must not hold a caller past its context. A Get whose
// read of Redis is on the wire when its caller cancels the context
// returns ctx.Err() at once (Get's doc), as a queued read does: the client
// honours a context's deadline (it sets it on the socket), not a
// cancellation, so the read runs on a goroutine of its own (detach). Close
// (the cleanup, after the server is killed) waits for that read, and the
// leak check finds nothing left.
func TestGetReturnsOnCancelWhileRedisHangs(t *testing.T) {
	checkLeaks(t)
	c, wire := heldCache(t, "get", time.Hour)
	err := cancelWhenSent(t, wire, func(ctx context.Context) error { _, err := c.Get(ctx, "k"); return err })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Get after its context was cancelled: %v; want context.Canceled", err)
	}
	if st := c.Stats(); st.L2Errors != 0 {
		t.Fatalf("L2Errors %d: the caller gave up, no failure of Redis", st.L2Errors)
	}
}

// The same for a ByteTier's Get; the key passed is the caller's again as
// soon as Get returns (the GET on its way keeps a copy).
func TestByteTierGetReturnsOnCancelWhileRedisHangs(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	wire := newWireWatch("get")
	cl := heldClient(t, srv, wire)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = time.Hour })
	waitTierSubscribed(t, bt)
	pause(t, srv, cl)
	key := []byte("k")
	err := cancelWhenSent(t, wire, func(ctx context.Context) error { _, _, _, err := bt.Get(ctx, nil, key); return err })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Get after its context was cancelled: %v; want an error wrapping context.Canceled", err)
	}
	key[0] = 'x' // the caller's bytes again: the race detector watches
	if st := bt.Stats(); st.L2Errors != 0 {
		t.Fatalf("L2Errors %d: the caller gave up, no failure of Redis", st.L2Errors)
	}
}

// A Set whose write is on the wire when its context is cancelled waits
// for Redis's answer (its doc: it reports what became of the write, and
// the key's next change does not overtake it), which a hanging Redis
// bounds by Options.Timeout: Set fails with the timeout, not with the
// cancellation.
func TestSetWaitsForAnswerWhenCancelled(t *testing.T) {
	checkLeaks(t)
	c, wire := heldCache(t, "eval", 300*time.Millisecond) // the write's script, sent whole the first time
	err := cancelWhenSent(t, wire, func(ctx context.Context) error { return c.Set(ctx, "k", "v2") })
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("Set cancelled while Redis hangs: %v; want the write's timeout", err)
	}
}

// wireWatch is a go-redis Dialer whose connections signal sent once a
// write carrying the command name has been written to the socket (the
// command is then on the wire, past any check of its context).
type wireWatch struct {
	name []byte
	sent chan struct{}
	once sync.Once
}

func newWireWatch(cmd string) *wireWatch {
	return &wireWatch{name: []byte("\r\n" + cmd + "\r\n"), sent: make(chan struct{})}
}

func (w *wireWatch) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	cn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &watchedConn{Conn: cn, w: w}, nil
}

type watchedConn struct {
	net.Conn
	w *wireWatch
}

func (c *watchedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && bytes.Contains(bytes.ToLower(p), c.w.name) {
		c.w.once.Do(func() { close(c.w.sent) })
	}
	return n, err
}

// ClientDefaults given nil returns new options with the defaults instead
// of panicking.
func TestClientDefaultsNil(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("ClientDefaults(nil) panicked: %v", p)
		}
	}()
	if o := ClientDefaults(nil); o == nil || !o.ContextTimeoutEnabled {
		t.Fatalf("ClientDefaults(nil) = %+v; want new options with the defaults", o)
	}
}
