package redis

import (
	"context"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// A redis.Cache's Loader that bounded its answer's lifetime with
// loading.LimitTTL had the bound kept in L1 only: the value went to Redis
// with the full TTL, and other instances served a 5-second answer as fresh
// for an hour (one made stale at once, as fresh too). The bound now holds
// in Redis, and a value stale at once is not written there.
func TestLoaderLimitTTLHoldsInRedis(t *testing.T) {
	s := standalone(t)
	cl, _ := backend{addrs: []string{s.Addr()}}.client(t)
	ctx := context.Background()
	const bound = 5 * time.Second
	loader := loading.LoaderFunc[string, string](func(ctx context.Context, k string) (string, error) {
		loading.LimitTTL(ctx, bound) // the source says: valid for 5s
		return "v", nil
	})
	a := newTier(t, cl, loader, func(o *Options[string]) {
		o.TTL = time.Hour
		o.Local.TTL = time.Hour
	})
	waitSubscribed(t, a)
	mustGet(t, a, "k", "v")
	eventually(t, 10*time.Second, "the loaded value written to Redis", func() bool { return a.Stats().L2Writes == 1 })
	pttl, err := cl.PTTL(ctx, a.prefix+"k").Result()
	if err != nil {
		t.Fatal(err)
	}
	if pttl > bound {
		t.Errorf("the Loader bounded the value's TTL to %v (LimitTTL), but Redis keeps it for %v", bound, pttl)
	}
	// A second instance takes it from Redis as fresh for far longer.
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	b := newTier(t, cl, newSource(), func(o *Options[string]) {
		o.TTL = time.Hour
		o.Local.TTL = time.Hour
		o.Clock = clock
	})
	waitSubscribed(t, b)
	mustGet(t, b, "k", "v")
	clock.add(time.Minute)
	if v, err := b.Get(ctx, "k"); err == nil && v == "v" && b.Stats().L2Reads == 1 {
		t.Errorf("a minute past the Loader's %v bound, the second instance still serves the value from L1 as fresh (1 Redis read)", bound)
	}

	// A value the Loader marks stale at once (LimitTTL 0) is not shared.
	stale := loading.LoaderFunc[string, string](func(ctx context.Context, k string) (string, error) {
		if k == "stale" {
			loading.LimitTTL(ctx, 0)
		}
		return "v", nil
	})
	c := newTier(t, cl, stale, func(o *Options[string]) { o.Writers = 1 })
	waitSubscribed(t, c)
	mustGet(t, c, "stale", "v")
	mustGet(t, c, "fresh", "v") // queued after stale's, had it been queued
	eventually(t, 10*time.Second, "fresh written to Redis", func() bool { return c.Stats().L2Writes == 1 })
	if n, err := cl.Exists(ctx, c.prefix+"stale").Result(); err != nil || n != 0 {
		t.Errorf("a value its Loader made stale at once (LimitTTL 0) is in Redis (exists %d, %v)", n, err)
	}
}
