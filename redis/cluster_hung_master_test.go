package redis

import (
	"cmp"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// frozenCluster starts a 3-master cluster that serves the slots of its
// live masters while one is stopped (no full coverage needed), and never
// fails a stopped master over (a long node timeout).
func frozenCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	c, err := redistest.StartCluster(redisBin(t), 3)
	if err != nil {
		noRedis(t, err)
	}
	t.Cleanup(c.Stop)
	for _, s := range c.Nodes {
		a := s.Client()
		for _, kv := range [][2]string{{"cluster-require-full-coverage", "no"}, {"cluster-node-timeout", "600000"}} {
			if err := a.ConfigSet(context.Background(), kv[0], kv[1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		_ = a.Close()
	}
	return c
}

func keyOwner(t *testing.T, c *redistest.Cluster, key string) int {
	a := c.Nodes[0].Client()
	defer a.Close()
	slot := int(a.ClusterKeySlot(context.Background(), key).Val())
	return slotOwner(slot)
}

// On a Redis Cluster with one master hung, a read of a key of a healthy
// master coalesced into one pipeline (Options.ReadsInFlight) with a read of
// the hung master's key failed with it: the ClusterClient gives a
// pipeline's error to each of its commands that has none, healthy ones
// included, and the whole pipeline waited for the hung node. Queued reads
// now go in one pipeline per master, at the same time: a master that hangs
// fails the calls for its keys only.
func TestClusterHungMasterFailsOnlyItsReads(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	// A prefix whose invalidation channel lives on master 0; master 2
	// will hang.
	var prefix string
	for i := 0; prefix == ""; i++ {
		p := testPrefix(t) + strconv.Itoa(i) + ":"
		if keyOwner(t, c, p+"invalidate") == 0 {
			prefix = p
		}
	}
	// held: the round trip in flight, held by a hook (master 0);
	// healthy (master 1) and hung (master 2) queue behind it.
	var held, healthy, hung string
	for i := 0; held == "" || healthy == "" || hung == ""; i++ {
		k := "k" + strconv.Itoa(i)
		switch keyOwner(t, c, prefix+k) {
		case 0:
			held = cmp.Or(held, k)
		case 1:
			healthy = cmp.Or(healthy, k)
		case 2:
			hung = cmp.Or(hung, k)
		}
	}
	newClient := func() *goredis.ClusterClient {
		cl := goredis.NewClusterClient(ClientDefaults(&goredis.UniversalOptions{Addrs: c.Addrs(), IsClusterMode: true}).Cluster())
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	src := newSource()
	for _, k := range []string{held, healthy, hung} {
		src.set(k, "v"+k[1:])
	}
	tweak := func(o *Options[string]) {
		o.Prefix = prefix
		o.Timeout = 2 * time.Second
		o.BreakerFailures = 1000 // the breaker stays closed: only the reads themselves matter
		o.ReadsInFlight = 1
	}
	cl := newClient()
	a := newTier(t, cl, src, tweak)
	w := newTier(t, newClient(), src, tweak) // writes healthy's value, so that a's L1 holds none
	waitSubscribed(t, a, w)
	if err := w.Set(ctx, healthy, "v"+healthy[1:]); err != nil {
		t.Fatal(err)
	}
	g := newGate(prefix + held)
	cl.AddHook(g)

	stopProcess(t, c.Nodes[2])
	first := getAsync(a, ctx, held)
	<-g.entered
	healthyDone := getAsync(a, ctx, healthy)
	hungDone := getAsync(a, ctx, hung)
	eventually(t, 10*time.Second, "two reads queued", func() bool { return queuedReads(a) == 2 })
	close(g.release)
	for _, done := range []<-chan error{first, healthyDone, hungDone} {
		if err := <-done; err != nil {
			t.Error(err) // from the source if not from Redis: a value either way
		}
	}
	// held: a miss in Redis (loaded); healthy: a hit; hung: an error.
	if st := a.Stats(); st.L2Hits != 1 || st.L2Errors != 1 {
		t.Errorf("L2Hits %d, L2Errors %d: want 1 hit (the healthy master's key, queued with the hung master's) and 1 error (the hung master's key)",
			st.L2Hits, st.L2Errors)
	}
}
