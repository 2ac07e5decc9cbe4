package redis

import (
	"context"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// brokenSubscriptionToHangingRedis starts a private server and a black
// hole, and returns a client of the server (the client's own timeouts an
// hour long) and breakSub, which kills the client's Pub/Sub connection
// and makes its next dial go to the black hole (a Redis that accepts and
// never answers), returning once go-redis has reconnected there.
func brokenSubscriptionToHangingRedis(t *testing.T) (srv *redistest.Server, bh *redistest.BlackHole, cl *goredis.Client, breakSub func()) {
	t.Helper()
	srv = private(t)
	bh, err := redistest.NewBlackHole()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bh.Close)
	d := &redirectDialer{}
	cl = goredis.NewClient(&goredis.Options{
		Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour, DialTimeout: time.Hour,
		Dialer: d.dial,
	})
	t.Cleanup(func() { _ = cl.Close() })
	breakSub = func() {
		t.Helper()
		d.redirectNext(bh.Addr())
		admin := srv.Client()
		defer admin.Close()
		if err := admin.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Err(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the subscriber reconnecting to the hanging Redis", func() bool { return bh.Accepted() > 0 })
	}
	return srv, bh, cl, breakSub
}

// When the subscription's connection broke, go-redis reconnected inside
// the subscriber's receive, holding the PubSub's lock, and the receive's
// context lasted HealthCheck plus Timeout: a reconnect to a Redis that
// hangs held Close for min(HealthCheck, the client's ReadTimeout) plus
// Timeout (3s for a Timeout of 200ms with go-redis's default ReadTimeout;
// minutes with a long HealthCheck), where the docs say Timeout. Each
// receive now lasts at most Timeout (100ms at least), the silence adding
// up to HealthCheck before a ping.
func TestCloseBoundedWhenSubscriptionReconnectHangs(t *testing.T) {
	for _, kind := range []string{"Cache", "ByteTier"} {
		t.Run(kind, func(t *testing.T) {
			checkLeaks(t)
			_, bh, cl, breakSub := brokenSubscriptionToHangingRedis(t)
			var closeIt func()
			if kind == "Cache" {
				c := newTier(t, cl, newSource(), func(o *Options[string]) {
					o.Timeout = 200 * time.Millisecond
					o.HealthCheck = 10 * time.Minute
				})
				waitSubscribed(t, c)
				closeIt = c.Close
			} else {
				bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
					o.Timeout = 200 * time.Millisecond
					o.HealthCheck = 10 * time.Minute
				})
				waitTierSubscribed(t, bt)
				closeIt = bt.Close
			}
			breakSub()

			closed := make(chan struct{})
			go func() { closeIt(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second): // 50 times Timeout
				t.Errorf("%s.Close still blocked 10s later (Timeout 200ms, HealthCheck 10m): it waits for the subscriber's "+
					"reconnect to the hanging Redis, which only HealthCheck+Timeout (or the client's ReadTimeout) bounds", kind)
			}
			bh.Close() // releases the handshake, so that Close returns and the test ends
			<-closed
		})
	}
}

// The same reconnect, inside a receive that lasted HealthCheck plus
// Timeout, hid the subscription's loss: L1 was not flushed DegradedTTL
// after it, and another instance's Set was missed for over 10s (DegradedTTL
// 50ms, HealthCheck 10m). With receives bounded by Timeout the loss is
// seen within about twice Timeout.
func TestBrokenSubscriptionFlushedWhenReconnectHangs(t *testing.T) {
	checkLeaks(t)
	srv, bh, clB, breakSub := brokenSubscriptionToHangingRedis(t)
	defer bh.Close() // before the caches' Close (cleanups), which it releases
	clA := srv.Client()
	t.Cleanup(func() { _ = clA.Close() })
	src := newSource()
	src.set("k", "v1")
	tweak := func(o *Options[string]) {
		o.Timeout = 200 * time.Millisecond
		o.HealthCheck = 10 * time.Minute
		o.DegradedTTL = 50 * time.Millisecond
		o.ResubscribeDelay = 10 * time.Millisecond
		o.TTL = 10 * time.Hour
		o.Local.TTL = 10 * time.Minute
	}
	a := newTier(t, clA, src, tweak)
	b := newTier(t, clB, src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, b, "k", "v1") // in b's L1, and a pooled connection of clB to srv
	breakSub()
	if err := a.Set(context.Background(), "k", "v2"); err != nil {
		t.Fatal(err)
	}
	// DegradedTTL (50ms) after the loss b's L1 is flushed and b reads v2;
	// 10s is 200 times that.
	eventually(t, 10*time.Second, "b serving a's new value v2 (DegradedTTL 50ms, Timeout 200ms, HealthCheck 10m) after its "+
		"subscription broke: b is not told of the loss while go-redis's reconnect to the hanging Redis runs", func() bool {
		v, err := b.Get(context.Background(), "k")
		return err == nil && v == "v2"
	})
}
