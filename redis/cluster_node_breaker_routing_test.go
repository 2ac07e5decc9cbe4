package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// With Sharded: ShardedOff on a ClusterClient (plain PUBLISH), go-redis
// treats PUBLISH as a keyless command and sends it to the next master in
// turn, not to the master of the channel's slot, while the publication's
// result went to the breaker of the channel's slot master, which also
// gates that master's reads and writes: when another master hung, the
// publications that reached it timed out and opened the healthy master's
// breaker, and its keys' calls failed at once with ErrUnavailable. The
// publication now goes to the channel's slot master itself.
func TestPlainPublishOnClusterGoesToTheChannelsMaster(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	// The channel's slot and the key live on master 0; master 2 hangs.
	prefix := channelOn(t, c, 0)
	key := keyOn(t, c, prefix, 0)
	cl := clusterClient(t, c)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.Sharded = ShardedOff
		o.Timeout = 200 * time.Millisecond
		o.BreakerFailures = 1
		o.Clock = clock
	})
	if err := bt.Set(ctx, []byte(key), []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	// A read first, as a running instance has made: the ClusterClient
	// loads its command table (COMMAND, from a node picked at random) on
	// its first routed read, which would wait for the hung node.
	if _, _, _, err := bt.Get(ctx, nil, []byte(key)); err != nil {
		t.Fatal(err)
	}
	stopProcess(t, c.Nodes[2])
	// Each write lands on master 0, which is healthy; the publications go
	// round the masters, and one of three consecutive ones reaches master 2.
	var setErrs []error
	for range 6 {
		setErrs = append(setErrs, bt.Set(ctx, []byte(key), []byte("v2"), time.Hour))
	}
	v, _, found, err := bt.Get(ctx, nil, []byte(key))
	if err != nil || !found || string(v) != "v2" {
		t.Errorf("Get of a key of healthy master 0 while only master 2 hangs = %q, %v, %v; want %q from Redis "+
			"(Sets' errors %v): a plain PUBLISH sent to hung master 2 was reported to master 0's breaker "+
			"(the channel's slot), which opened", v, found, err, "v2", setErrs)
	}
	if errors.Is(err, ErrUnavailable) && bt.breakerAt(c.Nodes[0].Addr()).State() != BreakerOpen {
		t.Errorf("setup: Get refused, but master 0's breaker is %v", bt.breakerAt(c.Nodes[0].Addr()).State())
	}
}

// Until a call had succeeded (core.mapped), a caller whose ctx could be
// cancelled (an HTTP request's, say) got the address "" from nodeAddr, so
// its call went through core.brk, the breaker of calls whose node is
// unknown, though the cluster client knew the node. When the first calls
// after a start went to a master that hung, their timeouts opened
// core.brk, and while it was not closed every key got "": the healthy
// masters' calls failed at once with ErrUnavailable. Such a caller now
// asks for the node on a goroutine of its own (returning at once if its
// ctx ends), and its call goes through its master's breaker.
func TestCancellableCallsBeforeFirstSuccessUseTheirMastersBreaker(t *testing.T) {
	checkLeaks(t)
	c := frozenCluster(t)
	prefix := channelOn(t, c, 0) // the channel on master 0, which stays healthy
	hungKey, healthyKey := keyOn(t, c, prefix, 2), keyOn(t, c, prefix, 0)
	cl := clusterClient(t, c)
	if err := cl.ForEachMaster(context.Background(), func(ctx context.Context, m *goredis.Client) error { return m.Ping(ctx).Err() }); err != nil {
		t.Fatal(err) // the client has its map of the slots
	}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.Prefix = prefix
		o.Timeout = 200 * time.Millisecond
		o.BreakerFailures = 2
		o.Clock = clock
	})
	waitTierSubscribed(t, bt)
	stopProcess(t, c.Nodes[2])
	// Requests with cancellable contexts (never cancelled here) read keys
	// of the hung master: each times out.
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		_, _, _, err := bt.Get(ctx, nil, []byte(hungKey))
		cancel()
		if err == nil || errors.Is(err, ErrUnavailable) {
			t.Fatalf("Get %d of a key of hung master 2: %v; want its timeout", i+1, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, found, err := bt.Get(ctx, nil, []byte(healthyKey))
	if err != nil {
		t.Errorf("Get of a key of healthy master 0 while only master 2 hangs = %v, %v; want a miss from Redis "+
			"(Stats.Breaker %v, breaker of unknown nodes %v): the hung master's timeouts opened the breaker of "+
			"unknown nodes, which then stops every master's calls", found, err, bt.Stats().Breaker, bt.brk.State())
	}
}
