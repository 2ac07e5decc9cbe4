package redis

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// refusedAddr returns a loopback address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// New and NewByteTier wait up to Timeout for the subscription, so that a
// healthy start does not flush what is cached right after it; but with
// Redis refusing the connection, the first attempt fails at once and the
// next comes only after ResubscribeDelay: they must not wait out the rest
// of Timeout (an hour here) for nothing.
func TestNewReturnsOnceTheSubscriptionIsRefused(t *testing.T) {
	cl := goredis.NewClient(&goredis.Options{Addr: refusedAddr(t), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = cl.Close() })
	quiet := slog.New(slog.DiscardHandler)
	for _, name := range []string{"Cache", "ByteTier"} {
		done := make(chan func(), 1)
		go func() {
			if name == "Cache" {
				c, err := New(Options[string]{Client: cl, Loader: newSource(), Logger: quiet,
					Timeout: time.Hour, TombstoneTTL: 3 * time.Hour, ResubscribeDelay: time.Hour})
				if err != nil {
					t.Error(err)
					done <- func() {}
					return
				}
				done <- c.Close
				return
			}
			bt, err := NewByteTier(ByteTierOptions{Client: cl, Logger: quiet, Timeout: time.Hour, ResubscribeDelay: time.Hour})
			if err != nil {
				t.Error(err)
				done <- func() {}
				return
			}
			done <- bt.Close
		}()
		select {
		case closeIt := <-done:
			closeIt()
		case <-time.After(30 * time.Second): // a generous bound: it returns within milliseconds
			t.Fatalf("New%s has not returned 30s after Redis refused the connection (Timeout 1h): it waits out Timeout", strings.TrimPrefix(name, "Cache"))
		}
	}
}

// A Redis that refuses the subscription (SSUBSCRIBE with ShardedOn before
// Redis 7, here renamed away) left the cache degraded for good, flushing L1
// every DegradedTTL, without a word in the log: only a subscription that
// had been up and was lost was logged.
func TestRefusedSubscriptionIsLogged(t *testing.T) {
	s, err := redistest.Start(redisBin(t), "--rename-command", "SSUBSCRIBE", "", "--rename-command", "SPUBLISH", "")
	if err != nil {
		noRedis(t, err)
	}
	t.Cleanup(s.Stop)
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cl.Close() })
	lines := &lineCounter{}
	c := newTier(t, cl, newSource(), func(o *Options[string]) {
		o.Sharded = ShardedOn
		o.Logger = slog.New(slog.NewTextHandler(lines, nil))
	})
	eventually(t, 10*time.Second, "a log line telling that the subscription failed, with Redis's reply", func() bool {
		return lines.count("subscription failed") > 0 && lines.count("unknown command") > 0
	})
	if st := c.Stats(); st.Subscribed || st.Subscriptions != 0 {
		t.Errorf("Subscribed %v, Subscriptions %d; want false, 0", st.Subscribed, st.Subscriptions)
	}
}
