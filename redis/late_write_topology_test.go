package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// ringSocketTimeoutLandsLate is socketTimeoutLandsLate for a one-shard
// goredis.Ring made from opts (its Dialer replaced by one that holds the
// first write script's bytes), with a ByteTier of the given Timeout.
func ringSocketTimeoutLandsLate(t *testing.T, opts *goredis.RingOptions, timeout time.Duration) {
	checkLeaks(t)
	srv := private(t)
	admin := srv.Client()
	t.Cleanup(func() { _ = admin.Close() })
	h := newHeldWrites()
	opts.Addrs = map[string]string{"s0": srv.Addr()}
	opts.Dialer = h.dial
	opts.ContextTimeoutEnabled = true
	opts.HeartbeatFrequency = time.Hour
	ring := goredis.NewRing(opts)
	t.Cleanup(func() { _ = ring.Close() })
	t.Cleanup(func() { h.release(t) })
	bt, _ := newByteTier(t, ring, func(o *ByteTierOptions) { o.Timeout = timeout })
	returned, want, raw, err1 := heldFirstThenSecond(t, bt, admin, h)
	if raw != want {
		t.Errorf("the first Set returned %v after %v (Timeout %v), the second Set succeeded after it, and then the "+
			"first Set's held copy landed: Redis holds %.60q, want %.60q (the second Set's)",
			err1, returned.Round(time.Millisecond), timeout, raw, want)
	}
}

// On a goredis.Ring with its default ReadTimeout (0), each shard's client
// reads with go-redis's default socket timeout, but attemptLimit read the
// Ring's own options, which go-redis does not normalise (0 stays 0), and
// took 0 for no limit: a write with a Timeout above the default was cut by
// the shard's socket timeout before its deadline, and its held copy landed
// later over the key's next Set. The limit is now the shard client's.
func TestRingDefaultReadTimeoutWriteDoesNotLandLate(t *testing.T) {
	ringSocketTimeoutLandsLate(t, &goredis.RingOptions{MaxRetries: -1}, 10*time.Second)
}

// A Ring's shard clients are made by RingOptions.NewClient, which may give
// them their own read and write timeouts (and retries); attemptLimit read
// only the Ring's options, so a shard's socket timeout shorter than
// Timeout cut (and here resent) a write before its deadline, and the
// abandoned copy landed after the key's next Set.
func TestRingShardTimeoutWriteDoesNotLandLate(t *testing.T) {
	ringSocketTimeoutLandsLate(t, &goredis.RingOptions{
		MaxRetries: -1, ReadTimeout: time.Hour, WriteTimeout: time.Hour, DialTimeout: time.Hour, PoolTimeout: time.Hour,
		NewClient: func(o *goredis.Options) *goredis.Client {
			o.ReadTimeout, o.WriteTimeout, o.MaxRetries = 300*time.Millisecond, 300*time.Millisecond, 1
			return goredis.NewClient(o)
		},
	}, 3*time.Second)
}

// A write's estimate is picked by the master that the client's map of the
// slots names, but the write goes where Redis redirects it (MOVED, after a
// reshard): a new master whose clock is behind the old one's did not
// refuse, and the write carried a latest time the clocks' difference past
// its deadline on that master, while settle ended a few ms after it: a
// timed-out Set, held by the new master while it hung, landed when it
// resumed. On a cluster the bound is now the earliest of every master's
// with an estimate. (Master 1's clock runs an hour behind, simulated with
// a hook on its node client; master 1 hangs.)
func TestClusterRedirectToMasterBehindDoesNotLandLate(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	const behind = -int64(time.Hour / time.Millisecond)
	prefix := channelOn(t, c, 0)
	on1, moved := keyOn(t, c, prefix, 1), keyOn(t, c, prefix, 2)
	cl := skewedCluster(t, c, 1, behind, func(o *goredis.ClusterOptions) {
		// Connections ready: a write that needed a new one to master 1
		// once it hangs (the slot map's reload, on the MOVED, may hold
		// the pooled one) would wait in its handshake, never sent, and
		// the test could not see it run.
		o.MinIdleConns = 4
	})
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Prefix = prefix; o.Timeout = 200 * time.Millisecond })
	// Writes answered on both masters: their estimates, the script known.
	for _, k := range []string{on1, moved} {
		if err := bt.Set(ctx, []byte(k), []byte("before"), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	admin1, admin2 := c.Nodes[1].Client(), c.Nodes[2].Client()
	t.Cleanup(func() { _ = admin1.Close(); _ = admin2.Close() })
	if err := admin2.Del(ctx, prefix+moved).Err(); err != nil {
		t.Fatal(err)
	}
	// moved's slot (now empty) goes to master 1; the client's map still
	// names master 2.
	moveEmptySlot(t, c, admin2.ClusterKeySlot(ctx, prefix+moved).Val(), 2, 1)
	calls := commandCalls(t, admin1, "evalsha")
	resume := stopProcess(t, c.Nodes[1])
	start := time.Now()
	err := bt.Set(ctx, []byte(moved), []byte("late"), time.Hour)
	if err == nil {
		t.Fatal("a write to a master that hangs succeeded")
	}
	returned := time.Since(start)
	resume()
	if strings.Contains(err.Error(), "MOVED") {
		// go-redis gave up on the redirection (its backoff before
		// following it, within the write's deadline): nothing was
		// sent to master 1, and nothing may land there.
		t.Logf("the write was not redirected: %v", err)
	} else {
		eventually(t, 10*time.Second, "master 1 ran the write it held", func() bool { return commandCalls(t, admin1, "evalsha") > calls })
	}
	if raw, ok := rawGet(t, admin1, prefix+moved); ok {
		t.Errorf("a Set redirected to master 1 returned its error after %v (Timeout 200ms), yet master 1 ran it "+
			"when it resumed and it landed: it holds %.40q, want no key (its latest time came from master 2's clock)",
			returned.Round(time.Millisecond), raw)
	}
}

// On a cluster, a write to a master this process had no answer of yet
// (its first write there) carried no latest time at all, even when the
// other masters' clocks were estimated: held by that master while it hung,
// a timed-out Set landed when it resumed, over whatever had been written
// since. It is now bounded by the other masters' estimates (all three
// masters here run on one host: one clock).
func TestClusterFirstWriteToMasterIsBoundedByOthers(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	c := frozenCluster(t)
	prefix := channelOn(t, c, 0)
	on1, on2 := keyOn(t, c, prefix, 1), keyOn(t, c, prefix, 2)
	cl := goredis.NewClusterClient(&goredis.ClusterOptions{
		Addrs: c.Addrs(), ContextTimeoutEnabled: true, MaxRetries: -1, MinIdleConns: 4,
		DialTimeout: time.Hour, ReadTimeout: time.Hour, WriteTimeout: time.Hour, PoolTimeout: time.Hour,
	})
	t.Cleanup(func() { _ = cl.Close() })
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Prefix = prefix; o.Timeout = 200 * time.Millisecond })
	// A write answered by master 2 (its estimate; the script known to the
	// client) and a read of master 1 (a connection to it ready): the
	// client has no estimate of master 1's clock.
	if err := bt.Set(ctx, []byte(on2), []byte("before"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := bt.Get(ctx, nil, []byte(on1)); err != nil {
		t.Fatal(err)
	}
	admin1 := c.Nodes[1].Client()
	t.Cleanup(func() { _ = admin1.Close() })
	if took, raw := firstWriteHeld(t, bt, c.Nodes[1], admin1, on1); raw != "before" {
		t.Errorf("a first Set to master 1 returned its error after %v (Timeout 200ms), yet master 1 ran it when it resumed: "+
			"it holds %.40q, want %q (the other masters' estimates bound it)", took.Round(time.Millisecond), raw, "before")
	}
}

// On a ring, a write to a shard this process had no answer of yet (a shard
// added, or keys rehashed onto one not written to) carried no latest time,
// even with the other shards' clocks estimated: held by that shard while
// it hung, a timed-out Set landed when it resumed. It is now bounded by the
// other shards' estimates (both shards run on one host: one clock).
func TestRingFirstWriteToShardIsBoundedByOthers(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	srvA, srvB := private(t), private(t) // A hangs
	adminA := srvA.Client()
	t.Cleanup(func() { _ = adminA.Close() })
	ring := stableRing(t, srvA, srvB)
	// A prefix whose invalidation channel lives on B, which never hangs.
	prefix := ringChannelOn(t, ring, srvB)
	kA, _ := keyOnShard(t, ring, prefix, srvA, 0)
	kB, _ := keyOnShard(t, ring, prefix, srvB, 0)
	bt, _ := newByteTier(t, ring, func(o *ByteTierOptions) { o.Prefix = prefix; o.Timeout = 100 * time.Millisecond })
	// A write answered by B (its estimate; the script known to the
	// client) and a read of A (a connection to it ready).
	if err := bt.Set(ctx, []byte(kB), []byte("b"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := bt.Get(ctx, nil, []byte(kA)); err != nil {
		t.Fatal(err)
	}
	if took, raw := firstWriteHeld(t, bt, srvA, adminA, kA); raw != "before" {
		t.Errorf("a first Set to shard A returned its error after %v (Timeout 100ms), yet A ran it when it resumed: "+
			"it holds %.40q, want %q (shard B's estimate bounds it)", took.Round(time.Millisecond), raw, "before")
	}
}

// firstWriteHeld gives srv the write script and "before" in bt's key
// (through admin, behind bt's back), then has bt Set key to "late" while
// srv hangs (writeHeldByHungServer). It returns how long the Set took and
// what srv holds in the key after it has run the held write.
func firstWriteHeld(t *testing.T, bt *ByteTier, srv *redistest.Server, admin *goredis.Client, key string) (took time.Duration, raw string) {
	t.Helper()
	ctx := context.Background()
	if err := admin.ScriptLoad(ctx, writeScript).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, bt.prefix+key, "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	took = writeHeldByHungServer(t, srv, admin, func() error { return bt.Set(ctx, []byte(key), []byte("late"), time.Hour) })
	raw, _ = rawGet(t, admin, bt.prefix+key)
	return took, raw
}
