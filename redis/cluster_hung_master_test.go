package redis

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
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

// clusterClient returns a new ClusterClient of c with the package's
// defaults, closed when the test ends.
func clusterClient(t *testing.T, c *redistest.Cluster) *goredis.ClusterClient {
	cl := goredis.NewClusterClient(ClientDefaults(&goredis.UniversalOptions{Addrs: c.Addrs(), IsClusterMode: true}).Cluster())
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// channelOn returns a prefix for t's keys whose invalidation channel lives
// on master m of c.
func channelOn(t *testing.T, c *redistest.Cluster, m int) string {
	t.Helper()
	for i := 0; ; i++ {
		if p := testPrefix(t) + strconv.Itoa(i) + ":"; keyOwner(t, c, p+"invalidate") == m {
			return p
		}
	}
}

// keyOn returns the first key "k0", "k1", ... that lives, with prefix,
// on master m of c.
func keyOn(t *testing.T, c *redistest.Cluster, prefix string, m int) string {
	t.Helper()
	for i := 0; ; i++ {
		if k := "k" + strconv.Itoa(i); keyOwner(t, c, prefix+k) == m {
			return k
		}
	}
}

// On a Redis Cluster with one master hung, reads of the healthy masters'
// keys went on at once and from Redis: a read coalesced into one pipeline
// (Options.ReadsInFlight) with a read of the hung master's key failed with
// it (the ClusterClient gives a pipeline's error to each of its commands
// that has none, healthy ones included), and a read queued behind a round
// trip to the hung master waited for its Timeout. Round trips and queues
// are now counted per master: a master that hangs holds up and fails the
// reads of its keys only.
func TestClusterHungMasterFailsOnlyItsReads(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	// A prefix whose invalidation channel lives on master 0; master 2
	// will hang.
	prefix := channelOn(t, c, 0)
	// healthy is on master 1; hung holds two keys of master 2.
	var healthy string
	var hung []string
	for i := 0; healthy == "" || len(hung) < 2; i++ {
		k := "k" + strconv.Itoa(i)
		switch keyOwner(t, c, prefix+k) {
		case 1:
			healthy = cmp.Or(healthy, k)
		case 2:
			hung = append(hung, k)
		}
	}
	newClient := func() *goredis.ClusterClient { return clusterClient(t, c) }
	src := newSource()
	for _, k := range append([]string{healthy}, hung...) {
		src.set(k, "v"+k[1:])
	}
	const timeout = 2 * time.Second
	tweak := func(o *Options[string]) {
		o.Prefix = prefix
		o.Timeout = timeout
		o.BreakerFailures = 1000 // the breaker stays closed: only the reads themselves matter
		o.ReadsInFlight = 1
	}
	a := newTier(t, newClient(), src, tweak)
	w := newTier(t, newClient(), src, tweak) // writes healthy's value, so that a's L1 holds none
	waitSubscribed(t, a, w)
	if err := w.Set(ctx, healthy, "v"+healthy[1:]); err != nil {
		t.Fatal(err)
	}

	// A read through a's client first, as a running instance has made:
	// the ClusterClient loads its command table (COMMAND, from a node
	// picked at random) on its first routed command, which would wait
	// for the hung node's socket timeout if it picked that one.
	if _, err := a.Get(ctx, "warm-up"); err == nil || !errors.Is(err, loading.ErrNotFound) {
		t.Fatalf("warm-up read: %v", err)
	}
	stopProcess(t, c.Nodes[2])
	// hung[0] takes master 2's round trip; hung[1] queues behind it.
	hungDone := []<-chan error{getAsync(a, ctx, hung[0])}
	eventually(t, 10*time.Second, "a read of the hung master in flight", func() bool {
		a.reads.mu.Lock()
		defer a.reads.mu.Unlock()
		return a.reads.inFlight == 1
	})
	hungDone = append(hungDone, getAsync(a, ctx, hung[1]))
	eventually(t, 10*time.Second, "a read of the hung master queued", func() bool { return queuedReads(a) == 1 })
	start := time.Now()
	select {
	case err := <-getAsync(a, ctx, healthy):
		if err != nil {
			t.Error(err)
		}
	case <-time.After(timeout / 2): // a guard in the safe direction: it waited for the hung master
		t.Errorf("a read of a healthy master's key was still waiting after %v (the hung master's reads wait for Timeout %v)",
			time.Since(start).Round(time.Millisecond), timeout)
	}
	for _, done := range hungDone {
		if err := <-done; err != nil {
			t.Error(err) // from the source: a value either way
		}
	}
	if st := a.Stats(); st.L2Hits != 1 || st.L2Errors != 2 {
		t.Errorf("L2Hits %d, L2Errors %d: want 1 hit (the healthy master's key) and 2 errors (the hung master's keys)",
			st.L2Hits, st.L2Errors)
	}
}
