package redis

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// With a *goredis.Ring, the invalidation subscription stayed on the shard
// that owned the channel when it was made, while every PUBLISH goes to the
// shard that owns the channel now. When the channel's shard was down for a
// while (its heartbeat failing, its Pub/Sub connections dropped), the
// instances subscribed again on the shard the ring then mapped the channel
// to; when the shard came back, the ring mapped the channel to it again and
// every later invalidation was published there, where nobody listened.
// Both instances reported Subscribed, nothing looked lost, L1 was never
// flushed: B served the old value for its whole Local.TTL, not at most
// DegradedTTL as doc.go promises. The subscription now checks, once a step
// (Timeout), that the ring still routes the channel to its shard.
func TestRingSubscriptionFollowsTheChannelsShard(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srvA, srvB := private(t), private(t)
	var downA atomic.Bool // shard "a" unreachable for the rings' heartbeats
	hb := func(ctx context.Context, cl *goredis.Client) bool {
		if cl.Options().Addr == srvA.Addr() && downA.Load() {
			return false
		}
		return cl.Ping(ctx).Err() == nil
	}
	newRing := func() *goredis.Ring {
		r := goredis.NewRing(&goredis.RingOptions{
			Addrs:                 map[string]string{"a": srvA.Addr(), "b": srvB.Addr()},
			ContextTimeoutEnabled: true,
			HeartbeatFrequency:    5 * time.Millisecond,
			HeartbeatFn:           hb,
		})
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	ringA, ringB := newRing(), newRing()
	admA, admB := srvA.Client(), srvB.Client()
	t.Cleanup(func() { _ = admA.Close(); _ = admB.Close() })

	// A prefix whose invalidation channel lives on shard "a".
	var prefix string
	for i := 0; prefix == ""; i++ {
		p := fmt.Sprintf("%s%d:", testPrefix(t), i)
		if err := ringA.Set(ctx, p+"invalidate", "probe", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if admA.Exists(ctx, p+"invalidate").Val() == 1 {
			prefix = p
		}
	}
	channel := prefix + "invalidate"

	src := newSource()
	src.set("k", "v1")
	tweak := func(o *Options[string]) {
		o.Prefix = prefix
		o.ResubscribeDelay = 10 * time.Millisecond
		o.DegradedTTL = 200 * time.Millisecond
		o.TTL = 10 * time.Minute
		o.Local.TTL = time.Minute
	}
	a := newTier(t, ringA, src, tweak)
	b := newTier(t, ringB, src, tweak)
	waitSubscribed(t, a, b)

	// Shard "a" goes away (heartbeat fails, its Pub/Sub connections break):
	// the instances lose their subscriptions and subscribe again, on "b".
	downA.Store(true)
	eventually(t, 10*time.Second, "both rings mark shard a down", func() bool { return ringA.Len() == 1 && ringB.Len() == 1 })
	if err := admA.ClientKillByFilter(ctx, "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "both instances resubscribe", func() bool {
		sa, sb := a.Stats(), b.Stats()
		return sa.SubscriptionLosses == 1 && sa.Subscribed && sa.Subscriptions == 2 &&
			sb.SubscriptionLosses == 1 && sb.Subscribed && sb.Subscriptions == 2
	})
	// Shard "a" is back.
	downA.Store(false)
	eventually(t, 10*time.Second, "both rings mark shard a up", func() bool { return ringA.Len() == 2 && ringB.Len() == 2 })

	mustGet(t, b, "k", "v1") // in B's L1
	if err := a.Set(ctx, "k", "v2"); err != nil {
		t.Fatal(err)
	}
	numsub := func(adm *goredis.Client) int64 { return adm.PubSubNumSub(ctx, channel).Val()[channel] }
	// Ten times DegradedTTL: with the invalidation missed, B must have
	// dropped its copy by then (a subscription lost is flushed within
	// DegradedTTL of the loss, or at once when it is back).
	eventually(t, 2*time.Second, "B serves A's new value", func() bool {
		v, err := b.Get(ctx, "k")
		return err == nil && v == "v2"
	})
	// Both instances follow the channel back to shard a, each within a
	// step of its own (B serving v2 says nothing about when A moved: B's
	// copy may have been dropped by its own move, or have been loaded
	// during that move and so kept only DegradedTTL).
	eventually(t, 2*time.Second, "both instances subscribed on shard a, where the ring publishes", func() bool {
		return numsub(admA) == 2
	})
	if n := numsub(admB); n != 0 {
		t.Errorf("subscribers of %s left on shard b: %d, want 0", channel, n)
	}
}
