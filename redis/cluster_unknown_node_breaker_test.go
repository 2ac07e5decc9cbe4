package redis

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// While core.brk (the breaker of calls whose node cannot be named) was not
// closed, nodeAddr answered "" for every key, so brk's probe was whatever
// call came next, judged by whether that call succeeded, not by whether
// the nodes could be found again. When a cluster whose map of the slots
// could not be loaded came back with one master hung, a probe for a key of
// the hung master loaded the map, timed out on that master and reopened
// brk: the calls for every other master's keys then failed at once with
// ErrUnavailable, again after each such probe. brk's probe is now the
// node lookup itself: a node found closes brk, and the call goes through
// that node's breaker.
func TestUnknownNodeBreakerProbeOnHungMasterDoesNotStopHealthyMasters(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	prefix := channelOn(t, c, 0) // the channel on master 0
	keyOn := func(master int) string {
		for i := 0; ; i++ {
			if k := "k" + strconv.Itoa(i); keyOwner(t, c, prefix+k) == master {
				return k
			}
		}
	}
	hungKey, healthyKey := keyOn(2), keyOn(0)
	a0 := c.Nodes[0].Client()
	t.Cleanup(func() { _ = a0.Close() })
	var down atomic.Bool // the cluster's map cannot be loaded
	down.Store(true)
	o := ClientDefaults(&goredis.UniversalOptions{Addrs: c.Addrs(), IsClusterMode: true}).Cluster()
	o.ClusterSlots = func(ctx context.Context) ([]goredis.ClusterSlot, error) {
		if down.Load() {
			return nil, errors.New("cluster unreachable")
		}
		cmd := goredis.NewClusterSlotsCmd(ctx, "cluster", "slots")
		_ = a0.Process(ctx, cmd)
		return cmd.Result()
	}
	cl := goredis.NewClusterClient(o)
	t.Cleanup(func() { _ = cl.Close() })
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.Timeout = 200 * time.Millisecond
		o.BreakerFailures = 1
		o.Clock = clock
	})
	if _, _, _, err := bt.Get(ctx, nil, []byte(healthyKey)); err == nil {
		t.Fatal("setup: a Get succeeded while the cluster's map cannot be loaded")
	}
	if s := bt.brk.State(); s != BreakerOpen {
		t.Fatalf("setup: the breaker of unknown nodes is %v, want open", s)
	}
	// The cluster is reachable again, but master 2 hangs.
	down.Store(false)
	stopProcess(t, c.Nodes[2])
	clock.add(time.Minute) // past BreakerOpenFor: the next call probes
	if _, _, _, err := bt.Get(ctx, nil, []byte(hungKey)); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("setup: Get of a key of hung master 2: %v; want its timeout", err)
	}
	// (A node lists itself without a host: the client may name it ":port".)
	port := c.Nodes[0].Addr()[strings.LastIndexByte(c.Nodes[0].Addr(), ':'):]
	if n, err := cl.MasterForKey(ctx, prefix+healthyKey); err != nil || !strings.HasSuffix(n.Options().Addr, port) {
		if err == nil {
			err = errors.New("it names " + n.Options().Addr)
		}
		t.Fatalf("setup: the client's map of the slots does not name master 0 (%s) for %q: %v", c.Nodes[0].Addr(), healthyKey, err)
	}
	_, _, _, err := bt.Get(ctx, nil, []byte(healthyKey))
	if err != nil {
		t.Errorf("Get of a key of healthy master 0, with the cluster's map loaded again and only master 2 hung: %v; "+
			"want a miss from Redis (breaker of unknown nodes %v): the probe of the unknown-node breaker was a read of "+
			"the hung master's key, whose timeout reopened it for every master", err, bt.brk.State())
	}
}
