package redis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// stableRing returns a Ring over srvs (shards "s0", "s1", ...) whose
// heartbeat never marks a shard down during a test (a stopped shard stays
// in the ring, as it does for HeartbeatFrequency after it hangs), closed
// when the test ends.
func stableRing(t *testing.T, srvs ...*redistest.Server) *goredis.Ring {
	t.Helper()
	addrs := map[string]string{}
	for i, s := range srvs {
		addrs["s"+strconv.Itoa(i)] = s.Addr()
	}
	r := goredis.NewRing(&goredis.RingOptions{
		Addrs: addrs, ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		HeartbeatFrequency: time.Hour,
	})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// ringChannelOn returns a prefix for t's keys whose invalidation channel
// r maps to the shard of srv.
func ringChannelOn(t *testing.T, r *goredis.Ring, srv *redistest.Server) string {
	t.Helper()
	for i := 0; ; i++ {
		p := testPrefix(t) + strconv.Itoa(i) + ":"
		if cl, err := r.GetShardClientForKey(p + "invalidate"); err == nil && cl.Options().Addr == srv.Addr() {
			return p
		}
	}
}

// keyOnShard returns the first key "k<i>", i >= from, that r maps (with
// prefix) to the shard of srv, and the next i to try.
func keyOnShard(t *testing.T, r *goredis.Ring, prefix string, srv *redistest.Server, from int) (string, int) {
	t.Helper()
	for i := from; ; i++ {
		k := "k" + strconv.Itoa(i)
		cl, err := r.GetShardClientForKey(prefix + k)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Options().Addr == srv.Addr() {
			return k, i + 1
		}
	}
}

// On a Ring, one hung shard held up the reads of the healthy shards: a
// read of a healthy shard's key queued behind a round trip to the hung
// one, or behind a batch whose pipeline to it was out, waited for its
// Timeout. Round trips and queues are now counted per shard.
func TestRingHungShardHoldsUpOnlyItsReads(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srvA, srvB := private(t), private(t) // A will hang; B stays healthy
	ring := stableRing(t, srvA, srvB)
	// A prefix whose invalidation channel lives on the healthy shard.
	prefix := ringChannelOn(t, ring, srvB)
	held, n := keyOnShard(t, ring, prefix, srvB, 0) // the round trip in flight, held by a hook
	healthy1, n := keyOnShard(t, ring, prefix, srvB, n)
	healthy2, _ := keyOnShard(t, ring, prefix, srvB, n)
	hung, _ := keyOnShard(t, ring, prefix, srvA, 0)
	src := newSource()
	for _, k := range []string{held, healthy1, healthy2, hung} {
		src.set(k, "v"+k[1:])
	}
	const timeout = 5 * time.Second
	tweak := func(o *Options[string]) {
		o.Prefix = prefix
		o.Timeout = timeout
		o.BreakerFailures = 1000 // only the reads themselves matter
		o.ReadsInFlight = 1
	}
	// The healthy keys in Redis, written by another instance (so that c's
	// L1 holds none of them).
	w := newTier(t, stableRing(t, srvA, srvB), src, tweak)
	for _, k := range []string{healthy1, healthy2} {
		if err := w.Set(ctx, k, "v"+k[1:]); err != nil {
			t.Fatal(err)
		}
	}
	c := newTier(t, ring, src, tweak)
	waitSubscribed(t, c, w)
	g := newGate(prefix + held)
	ring.AddHook(g)

	stopProcess(t, srvA)
	first := getAsync(c, ctx, held)
	<-g.entered
	// hung takes A's round trip; healthy1 queues behind held, on B.
	hungDone := getAsync(c, ctx, hung)
	eventually(t, 10*time.Second, "the hung shard's read in flight", func() bool {
		c.reads.mu.Lock()
		defer c.reads.mu.Unlock()
		return c.reads.inFlight == 2
	})
	healthy1Done := getAsync(c, ctx, healthy1)
	eventually(t, 10*time.Second, "a read queued", func() bool { return queuedReads(c) == 1 })
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// B answers healthy1 at once; A's read hangs until its Timeout.
	if err := <-healthy1Done; err != nil {
		t.Fatal(err)
	}

	// A read of B's key now: B has just answered, A is still hung.
	healthy2Done := getAsync(c, ctx, healthy2)
	select {
	case err := <-healthy2Done:
		if err != nil {
			t.Error(err)
		}
	case err := <-hungDone:
		t.Errorf("the read of the hung shard's key ended (%v) before that of the healthy shard's key queued behind it", err)
		<-healthy2Done
	case <-time.After(timeout / 2):
		t.Errorf("Get of %s (healthy shard, which answered the batch at once) still waits after %v: it is held by the pipeline to the hung shard (Timeout %v)",
			healthy2, timeout/2, timeout)
		<-healthy2Done
	}
	<-hungDone
	if st := c.Stats(); st.L2Hits != 2 || st.L2Errors != 1 {
		t.Errorf("L2Hits %d, L2Errors %d: want 2 hits (the healthy shard's keys) and 1 error (the hung shard's key)", st.L2Hits, st.L2Errors)
	}
}
