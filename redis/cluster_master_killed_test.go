package redis

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// failoverCluster is a Redis Cluster of 3 masters (so that a majority survives
// the loss of one and can elect its replica) where the master that owns one
// channel's slot has a replica.
type failoverCluster struct {
	nodes   []*redistest.Server // the 3 masters, then the replica
	admins  []*goredis.Client
	ids     []string
	dead    []bool
	owner   int // the master that owns the channel's slot
	replica int // its replica
	slot    int // the channel's slot
}

// survivingChannel returns a prefix for t's keys whose invalidation
// channel lives on a master other than the one that dies (c.owner).
func (c *failoverCluster) survivingChannel(t *testing.T) string {
	t.Helper()
	for i := 0; ; i++ {
		p := testPrefix(t) + strconv.Itoa(i) + ":"
		if slotOwner(int(c.admins[0].ClusterKeySlot(context.Background(), p+"invalidate").Val())) != c.owner {
			return p
		}
	}
}

func startFailoverCluster(t *testing.T, channel string) *failoverCluster {
	t.Helper()
	bin := redisBin(t)
	c := &failoverCluster{replica: 3, dead: make([]bool, 4)}
	args := []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", "300", "--cluster-require-full-coverage", "yes",
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
	for range 4 {
		s, err := redistest.Start(bin, args...)
		if err != nil {
			noRedis(t, err)
		}
		t.Cleanup(s.Stop)
		a := s.Client()
		t.Cleanup(func() { _ = a.Close() })
		c.nodes, c.admins = append(c.nodes, s), append(c.admins, a)
	}
	ctx := context.Background()
	for i, a := range c.admins {
		c.ids = append(c.ids, a.ClusterMyID(ctx).Val())
		if i < 3 {
			if err := a.ClusterAddSlotsRange(ctx, i*16384/3, (i+1)*16384/3-1).Err(); err != nil {
				t.Fatal(err)
			}
			if err := a.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", i+1).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range c.nodes[1:] {
		if err := c.admins[0].ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(s.Port)).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.slot = int(c.admins[0].ClusterKeySlot(ctx, channel).Val())
	c.owner = slotOwner(c.slot)
	eventually(t, 20*time.Second, "the replica attached to the channel's master", func() bool {
		return c.admins[c.replica].ClusterReplicate(ctx, c.ids[c.owner]).Err() == nil
	})
	eventually(t, 20*time.Second, "the replica in sync", func() bool {
		info, err := c.admins[c.replica].Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})
	c.converge(t, c.owner)
	return c
}

// slotOwner returns the master (0, 1 or 2) that owns slot at the start.
func slotOwner(slot int) int {
	for i := 2; i > 0; i-- {
		if slot >= i*16384/3 {
			return i
		}
	}
	return 0
}

// converge waits until every live node reports cluster_state:ok and
// names master as the owner of the channel's slot.
func (c *failoverCluster) converge(t *testing.T, master int) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 20*time.Second, "the cluster converged", func() bool {
		for i, a := range c.admins {
			if c.dead[i] {
				continue
			}
			info, err := a.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
			shards, err := a.ClusterShards(ctx).Result()
			if err != nil {
				return false
			}
			found := false
			for _, sh := range shards {
				for _, r := range sh.Slots {
					if c.slot < int(r.Start) || c.slot > int(r.End) {
						continue
					}
					for _, n := range sh.Nodes {
						if n.Role == "master" && n.ID == c.ids[master] && n.Health == "online" {
							found = true
						}
					}
				}
			}
			if !found {
				return false
			}
		}
		return true
	})
}

// kill kills the master that owns the channel's slot and waits until its
// replica has taken over.
func (c *failoverCluster) kill(t *testing.T) {
	t.Helper()
	c.nodes[c.owner].Kill()
	c.dead[c.owner] = true
	c.converge(t, c.replica)
}

// client returns a ClusterClient of the 3 masters (as an application
// would configure it), closed when the test ends.
func (c *failoverCluster) client(t *testing.T) *goredis.ClusterClient {
	var addrs []string
	for _, s := range c.nodes[:3] {
		addrs = append(addrs, s.Addr())
	}
	cl := goredis.NewClusterClient(ClientDefaults(&goredis.UniversalOptions{Addrs: addrs, IsClusterMode: true}).Cluster())
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// With classic Pub/Sub on a Redis Cluster (Options.Sharded = ShardedOff,
// and likewise ByteTierOptions.Sharded), the invalidation subscription did
// not come back after the master that owns the channel's slot died and its
// replica was promoted: go-redis routes a ClusterClient's SUBSCRIBE to the
// master of the channel's slot, as it does SSUBSCRIBE, but subscribeLoop
// reloaded the client's map of the slots only in sharded mode, and go-redis
// itself reloads it only on a MOVED reply or every
// ClusterStateReloadInterval (60s by default), never on a dial error. Every
// attempt dialled the dead node for up to a minute after the cluster had
// healed (still unsubscribed 20s after), while L1 was flushed every
// DegradedTTL. The sharded default recovered within milliseconds.
func TestClassicSubscriptionAfterMasterKilled(t *testing.T) {
	checkLeaks(t)
	// One hash tag: both channels (and every key) in one slot.
	tag := "{" + testPrefix(t) + "}"
	c := startFailoverCluster(t, tag+"c:invalidate")
	src := newSource()
	tweak := func(o *Options[string]) {
		o.Prefix = tag + "c:"
		o.Sharded = ShardedOff
		o.DegradedTTL = 200 * time.Millisecond
		o.ResubscribeDelay = 5 * time.Millisecond
	}
	a := newTier(t, c.client(t), src, tweak)
	bt, err := NewByteTier(ByteTierOptions{Client: c.client(t), Prefix: tag + "b:", Timeout: time.Second,
		Sharded: ShardedOff, DegradedTTL: 200 * time.Millisecond, ResubscribeDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bt.Close)
	waitSubscribed(t, a)
	eventually(t, 10*time.Second, "the ByteTier subscribed", func() bool { return bt.Stats().Subscribed })

	c.kill(t)
	eventually(t, 10*time.Second, "the loss noticed", func() bool { return a.Stats().SubscriptionLosses == 1 })

	// The cluster has healed: the channel's slot has a live master again.
	eventually(t, 1500*time.Millisecond, "both subscribed again after the replica took over the channel's slot", func() bool {
		return a.Stats().Subscribed && bt.Stats().Subscribed
	})
}

// After a master died and its replica took over, Redis calls for the
// master's slots failed for up to a minute (go-redis reloads its map of
// the slots on MOVED or every ClusterStateReloadInterval, not when a node
// stops answering): every Set of such a key failed and the breaker opened.
// Only the subscriber reloaded the map, when the channel's own master died;
// here another master dies. A failed call of a ClusterClient now reloads
// the map.
func TestClusterWritesResumeAfterMasterKilled(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	keyTag := "{" + testPrefix(t) + "k}" // the keys' slot: its master dies
	c := startFailoverCluster(t, keyTag)
	prefix := c.survivingChannel(t) // its invalidation channel's master survives
	a := newTier(t, c.client(t), newSource(), func(o *Options[string]) {
		o.Prefix = prefix
		o.BreakerOpenFor = 100 * time.Millisecond
	})
	waitSubscribed(t, a)
	if err := a.Set(ctx, keyTag, "v1"); err != nil {
		t.Fatal(err)
	}
	c.kill(t)
	// The Sets fail until the client has learnt the slot's new master.
	eventually(t, 5*time.Second, "a Set of a key of the dead master's slot succeeds", func() bool {
		return a.Set(ctx, keyTag, "v2") == nil
	})
	if st := a.Stats(); st.SubscriptionLosses != 0 {
		t.Errorf("the subscription was lost (%d): the channel's master was not the one killed", st.SubscriptionLosses)
	}
}
