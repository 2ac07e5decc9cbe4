package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// ByteTier.Close waits for "the Gets in flight, including those whose
// callers have gone", so that nothing of the tier talks to Redis after
// Close has returned. core.nodeAddr ran the cluster client's map load
// (MasterForKey -> CLUSTER SLOTS) for a cancellable caller on a goroutine
// of its own (detach) that no count covered: once the caller cancelled,
// Get returned, Close returned at once, and the tier's goroutine was still
// on the wire to Redis (until Timeout). The lookup now counts as a call
// (beginCall), as a detached GET does.
func TestCloseWaitsForDetachedNodeLookup(t *testing.T) {
	cl, bh, loadDone := hungMapLoad(t)
	const timeout = 5 * time.Second
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = timeout })
	done := getCancelledInMapLoad(t, bt)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("setup: Get after its context was cancelled: %v; want context.Canceled", err)
	}
	bt.Close()
	select {
	case <-loadDone:
		// Close waited for the tier's Redis call: fine.
	default:
		var stacks []string
		for _, line := range strings.Split(ourGoroutines(), "\n") {
			if strings.Contains(line, "cachekit/redis.") && !strings.Contains(line, "_test.go") {
				stacks = append(stacks, line)
			}
		}
		t.Errorf("Close returned while the tier's goroutine (core.nodeAddr's detach) is still in the cluster map load, "+
			"CLUSTER SLOTS on the wire to Redis, for up to Timeout (%v) more:\n%s", timeout, strings.Join(stacks, "\n"))
	}
	bh.Close() // ends the load
	<-loadDone
}

// A key whose slot no master serves (a master lost without a replica and
// forgotten, a slot deleted during a resharding; the cluster keeps serving
// its other slots with cluster-require-full-coverage no) was charged to a
// node picked at random: go-redis's MasterForKey answers nodes.Random()
// for a slot that has no node. The read's failure (CLUSTERDOWN Hash slot
// not served) opened a healthy master's breaker, whose own keys' calls
// then failed at once with ErrUnavailable. That answer says nothing of the
// node that sent it: it is now neutral for the breakers.
func TestUnassignedSlotDoesNotOpenAHealthyMastersBreaker(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	prefix := channelOn(t, c, 0) // the channel on master 0
	a0 := c.Nodes[0].Client()
	defer a0.Close()
	slot := int64(-1)
	keyOn := func(master int) string {
		for i := 0; ; i++ {
			k := "k" + strconv.Itoa(i)
			if keyOwner(t, c, prefix+k) == master && a0.ClusterKeySlot(ctx, prefix+k).Val() != slot {
				return k
			}
		}
	}
	orphan := keyOn(2)
	slot = a0.ClusterKeySlot(ctx, prefix+orphan).Val()
	// Nobody serves the orphan's slot any more.
	for _, n := range c.Nodes {
		a := n.Client()
		if err := a.Do(ctx, "cluster", "delslots", slot).Err(); err != nil {
			t.Fatal(err)
		}
		_ = a.Close()
	}
	eventually(t, 10*time.Second, "no node lists the slot", func() bool {
		for _, n := range c.Nodes {
			a := n.Client()
			cmd := goredis.NewClusterSlotsCmd(ctx, "cluster", "slots")
			_ = a.Process(ctx, cmd)
			slots, err := cmd.Result()
			_ = a.Close()
			if err != nil {
				return false
			}
			for _, s := range slots {
				if int64(s.Start) <= slot && slot <= int64(s.End) {
					return false
				}
			}
		}
		return true
	})
	cl := clusterClient(t, c)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.BreakerFailures = 1
		o.Clock = clock
	})
	if _, _, _, err := bt.Get(ctx, nil, []byte(orphan)); err == nil {
		t.Fatal("setup: a Get of a key of an unassigned slot succeeded")
	}
	for m := range 3 { // each master serves its other slots
		addr := c.Nodes[m].Addr()
		if bt.breakerAt(addr).State() == BreakerClosed {
			continue
		}
		key := keyOn(m)
		if _, _, _, err := bt.Get(ctx, nil, []byte(key)); err != nil {
			t.Errorf("Get of %q, a key of healthy master %d (%s), after one failed read of a key of an unassigned slot: %v; "+
				"want a miss from Redis: the unassigned slot's failure was charged to master %d's breaker "+
				"(MasterForKey picks a random node for a slot without one), which opened", key, m, addr, err, m)
		}
	}
}
