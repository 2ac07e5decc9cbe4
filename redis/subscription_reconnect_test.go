package redis

import (
	"context"
	"math"
	"net"
	"sync"
	"testing"
	"time"
)

// redirectDialer is a go-redis Dialer that dials the address it is asked
// for, except for the one dial after redirectNext, which goes to another
// address (a Redis that hangs).
type redirectDialer struct {
	mu   sync.Mutex
	next string
}

func (d *redirectDialer) redirectNext(addr string) {
	d.mu.Lock()
	d.next = addr
	d.mu.Unlock()
}

func (d *redirectDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	if d.next != "" {
		addr, d.next = d.next, ""
	}
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// TestSubscriptionLossDetectedWhenReconnectHangs: the subscription's connection
// breaks (here CLIENT KILL; a failover, a proxy or a reset does the same)
// and the Redis it reconnects to hangs (accepts, never answers: here the
// black hole the next dial goes to).
//
// Promises:
//   - doc.go: "If the subscription is lost, invalidations may be missed:
//     L1's lifetimes are cut to Options.DegradedTTL (L1 is flushed
//     DegradedTTL after the loss ...)"; Options.HealthCheck: "a ping
//     unanswered for as long again means the subscription is lost".
//   - doc.go: "Close stops them all and waits for them, ... (each ends
//     within Timeout)"; core.stop: "A subscription attempt that a hanging
//     Redis holds (while connecting, or waiting for its handshake's answer)
//     ends after Options.Timeout".
//
// When the subscription's read fails with a non-timeout error (EOF),
// go-redis reconnects inside that very receive (dial and HELLO), holding
// the PubSub's mutex: with the receive's context bounded only by the
// cache's life, the HELLO to the hanging Redis was bounded by the client's
// ReadTimeout (here an hour), not by Options.Timeout. The subscriber
// neither returned nor reported the loss, L1 was never flushed, another
// instance's Set was missed, and Close blocked on the PubSub's mutex. Each
// receive now has a deadline (its wait plus Timeout).
func TestSubscriptionLossDetectedWhenReconnectHangs(t *testing.T) {
	checkLeaks(t)
	srv, bh, clB, breakSub := brokenSubscriptionToHangingRedis(t)
	clA := srv.Client()
	t.Cleanup(func() { _ = clA.Close() })

	src := newSource()
	src.set("k", "v1")
	tweak := func(o *Options[string]) {
		o.Timeout = 200 * time.Millisecond
		o.HealthCheck = 50 * time.Millisecond
		o.DegradedTTL = 50 * time.Millisecond
		o.ResubscribeDelay = 10 * time.Millisecond
		o.TTL = 10 * time.Hour
		o.Local.TTL = 10 * time.Minute
	}
	a := newTier(t, clA, src, tweak)
	b := newTier(t, clB, src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, b, "k", "v1") // in b's L1 (and a pooled connection of clB to srv)

	// b's subscription breaks; its next connection goes to a Redis that hangs.
	breakSub()

	if err := a.Set(context.Background(), "k", "v2"); err != nil {
		t.Fatal(err)
	}
	// With the loss detected (within about HealthCheck and Timeout), b's L1
	// is flushed DegradedTTL later and b reads v2 from srv (its pooled
	// connection). 5s is ten times what that takes.
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := b.Get(context.Background(), "k")
		if err == nil && v == "v2" {
			break
		}
		if time.Now().After(deadline) {
			st := b.Stats()
			t.Errorf("5s after its subscription's connection broke (HealthCheck 50ms, DegradedTTL 50ms, Timeout 200ms), "+
				"b still serves %q, %v (want v2): Stats.Subscribed %v, SubscriptionLosses %d, Flushes %d; "+
				"the subscriber is held by go-redis's reconnect to the hanging Redis", v, err, st.Subscribed, st.SubscriptionLosses, st.Flushes)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}

	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Errorf("b.Close still blocked 5s later (Timeout 200ms): it waits for the subscriber's reconnect to the hanging Redis (the client's ReadTimeout, an hour)")
	}
	bh.Close() // releases the HELLO, so that Close returns and the test ends
	<-closed
}

// A HealthCheck so long that a receive's wait plus Timeout overflows a
// Duration keeps its subscription: the receive's deadline saturates
// instead of going negative, which would end every receive at once (a
// loss right after each confirmation).
func TestSubscriptionWithLongestHealthCheck(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	clA, clB := srv.Client(), srv.Client()
	t.Cleanup(func() { _ = clA.Close(); _ = clB.Close() })
	src := newSource()
	src.set("k", "v1")
	tweak := func(o *Options[string]) { o.HealthCheck = time.Duration(math.MaxInt64) }
	a := newTier(t, clA, src, tweak)
	b := newTier(t, clB, src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, b, "k", "v1")
	if err := a.Set(context.Background(), "k", "v2"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "b's copy of k invalidated", func() bool {
		v, err := b.Get(context.Background(), "k")
		return err == nil && v == "v2"
	})
	if st := b.Stats(); st.SubscriptionLosses != 0 || !st.Subscribed {
		t.Errorf("b's Stats: Subscribed %v, SubscriptionLosses %d; want true, 0", st.Subscribed, st.SubscriptionLosses)
	}
}
