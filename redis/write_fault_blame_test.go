package redis

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// A Redis user that may use no Pub/Sub channel (ACL resetchannels, the
// default for new users since Redis 7) stores every ByteTier Set but has its
// PUBLISH refused with NOPERM: the Set returns that error, and the breaker
// stays closed. writeAndPublish reported the refusal to the breaker as a
// failure of Redis (unavailableReply lists NOPERM), so a few Sets opened it
// and every Get then failed with ErrUnavailable although Redis answered
// reads (and had stored those writes).
func TestRefusedPublishKeepsBreakerClosed(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	cl := noPubSubClient(t, private(t))
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.BreakerFailures = 3
		o.BreakerOpenFor = time.Hour
	})
	for i := range 3 {
		err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour)
		if err == nil || errors.Is(err, ErrUnavailable) {
			t.Fatalf("Set %d: %v; want the refused publication's error", i, err)
		}
	}
	// The value is in Redis: the Sets wrote it.
	if raw, ok := rawGet(t, cl, testPrefix(t)+"k"); !ok || raw == "" {
		t.Fatal("the Sets did not store the value")
	}
	v, _, ok, err := bt.Get(ctx, nil, []byte("k"))
	if err != nil || !ok || string(v) != "v" {
		t.Fatalf("Get after 3 Sets whose publication the ACL refused = %q, %v, %v (breaker %v); want v: Redis answers reads",
			v, ok, err, bt.Stats().Breaker)
	}
}

// noPubSubClient returns a client of srv (closed when the test ends) for
// a user that may use no Pub/Sub channel (ACL resetchannels): its PUBLISH
// and SUBSCRIBE are refused with NOPERM, its other commands run.
func noPubSubClient(t *testing.T, srv *redistest.Server) *goredis.Client {
	t.Helper()
	admin := srv.Client()
	defer admin.Close()
	if err := admin.Do(context.Background(), "acl", "setuser", "nopubsub", "on", ">pw", "~*", "resetchannels", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{
		Addrs: []string{srv.Addr()}, Username: "nopubsub", Password: "pw",
	}).Simple())
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// sentMarkerConn signals sent once a write holding marker has gone to the
// socket.
type sentMarkerConn struct {
	net.Conn
	marker []byte
	once   *sync.Once
	sent   chan struct{}
}

func (c sentMarkerConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if bytes.Contains(bytes.ToLower(p), c.marker) {
		c.once.Do(func() { close(c.sent) })
	}
	return n, err
}

// A Set whose write is on the wire when its caller cancels waits for
// Redis's answer (as documented); a Redis that never answers fails it at
// Timeout, which counts in L2WriteErrors and as a breaker failure.
// writeAndPublish took any ended ctx for the caller giving up (callerDone),
// so such a Set counted nowhere and was neutral for the breaker; the Stats
// doc excludes only calls that failed because the caller's context ended.
func TestCancelledSetTimedOutByRedisCounts(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	ctx := context.Background()
	admin := srv.Client()
	defer admin.Close()
	sent := make(chan struct{})
	var once sync.Once
	cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{
		Addrs: []string{srv.Addr()},
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			cn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return sentMarkerConn{Conn: cn, marker: []byte("pxat"), once: &once, sent: sent}, nil
		},
	}).Simple())
	t.Cleanup(func() { _ = cl.Close() })
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Timeout = 300 * time.Millisecond
		o.BreakerFailures = 1
		o.BreakerOpenFor = time.Hour
	})
	if err := cl.Ping(ctx).Err(); err != nil { // a connection ready in the pool
		t.Fatal(err)
	}
	// Redis holds every write from now on: the Set's answer never comes.
	if err := admin.Do(ctx, "client", "pause", 60000, "write").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(context.Background(), "client", "unpause")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bt.Set(cctx, []byte("k"), []byte("v"), time.Hour) }()
	<-sent
	cancel() // after the write is on the wire: Set still waits for Redis
	err := <-done
	if err == nil {
		t.Fatal("Set to a Redis that holds writes succeeded")
	}
	st := bt.Stats()
	if st.L2WriteErrors != 1 || st.Breaker != BreakerOpen {
		t.Fatalf("Set failed at Timeout (%v), Redis not answering, its caller's cancel ignored; "+
			"L2WriteErrors %d, breaker %v; want 1 and open (BreakerFailures 1)", err, st.L2WriteErrors, st.Breaker)
	}
}
