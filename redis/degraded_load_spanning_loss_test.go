package redis

import (
	"context"
	"testing"
	"time"
)

// DegradedTTL is the longest L1 lifetime of values loaded while the
// subscription is down. Cache.load (the path of GetMany, of background
// reloads and of a probe whose caller gave up) looked at the subscription
// only before its Redis read: a read in flight when the subscription was
// lost returned an L2 hit stored with the Redis entry's whole remaining
// TTL (Get's probe checks after its read). load now also bounds what it
// returns when the subscription was lost during the call. Here GetMany's
// read of "k" is held while the subscription is killed; L1 (on the
// injected Clock) must not serve the value as fresh DegradedTTL later.
// (Found by a review helper.)
func TestDegradedTTLCapsGetManyReadSpanningLoss(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srv := private(t)
	client, _ := backend{addrs: []string{srv.Addr()}}.client(t)
	src := newSource()
	w := newTier(t, client, src, func(o *Options[string]) { o.TTL = 4 * time.Hour })
	if err := w.Set(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	rcl, _ := backend{addrs: []string{srv.Addr()}}.client(t)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c := newTier(t, rcl, src, func(o *Options[string]) {
		o.Prefix = w.prefix
		o.TTL = 4 * time.Hour
		o.Local.TTL = 4 * time.Hour
		o.DegradedTTL = time.Hour      // the real-time flush never fires during the test
		o.ResubscribeDelay = time.Hour // the subscription stays down once lost
		o.HealthCheck = time.Hour
		o.Clock = clock
	})
	waitSubscribed(t, c)
	g := newGate(c.prefix + "k") // holds the load's GET of "k"
	rcl.AddHook(g)
	done := make(chan error, 1)
	go func() {
		m, err := c.GetMany(ctx, []string{"k"})
		if err == nil && m["k"] != "v" {
			t.Errorf("GetMany = %v", m)
		}
		done <- err
	}()
	<-g.entered
	if err := client.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the subscription lost", func() bool { return !c.Stats().Subscribed })
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.L2Hits != 1 || st.Loads != 0 {
		t.Fatalf("L2Hits %d, Loads %d: want the value read from Redis", st.L2Hits, st.Loads)
	}
	clock.add(time.Hour) // DegradedTTL on L1's clock
	if v, hit := l1Answer(t, c, "k"); hit {
		t.Errorf("L1 still serves %q as fresh DegradedTTL (1h) after GetMany read it from Redis with the subscription down", v)
	}
}
