package redis

import (
	"context"
	"testing"
	"time"
)

// Values are written to Redis to expire at exactly the millisecond their
// envelope carries (PXAT). go-redis's SetArgs.ExpireAt sends EXAT, in whole
// seconds, which would drop entries up to 999 ms early; PEXPIRETIME tells.
func TestRedisExpiryInMilliseconds(t *testing.T) {
	checkLeaks(t)
	forEachBackend(t, func(t *testing.T, b backend) {
		client, _ := b.client(t)
		c := newTier(t, client, newSource(), func(o *Options[string]) { o.TTL = 1500 * time.Millisecond })
		ctx := context.Background()
		for _, key := range []string{"k1", "k2", "k3"} {
			if err := c.Set(ctx, key, "v"); err != nil {
				t.Fatal(err)
			}
			raw, ok := rawGet(t, client, c.prefix+key)
			if !ok {
				t.Fatalf("%s is not in Redis", key)
			}
			want := expiry([]byte(raw))
			got, err := client.Do(ctx, "pexpiretime", c.prefix+key).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s expires in Redis at %d ms, its envelope says %d ms", key, got, want)
			}
		}
	})
}

// A loaded value's write whose expiry has passed by the time it runs (it
// waited in the write queue) writes nothing: SET with a past PXAT would
// delete the key, and a tombstone with it, letting a load that read the
// key before its Delete put the old value back.
func TestLateWriteKeepsTombstone(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		client, _ := b.client(t)
		c := newTier(t, client, newSource(), nil)
		ctx := context.Background()
		if err := c.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		raw, ok := rawGet(t, client, c.prefix+"k")
		if !ok || parseEntry(raw).kind != kindTomb {
			t.Fatalf("no tombstone after Delete: %q", raw)
		}
		token := parseEntry(raw).casToken()
		for _, exp := range []int64{time.Now().Add(-time.Second).UnixMilli(), time.Now().Add(time.Hour).UnixMilli()} {
			env := newEnvelope(kindValue, 7, c.fp, exp, 0)
			n, _, err := scriptAnswer(c.cas.Run(ctx, client, []string{c.prefix + "k"}, token, env, exp, time.Now().Add(time.Hour).UnixMilli()))
			if err != nil {
				t.Fatal(err)
			}
			future := exp > time.Now().UnixMilli()
			if got, _ := rawGet(t, client, c.prefix+"k"); (n == 1) != future || (parseEntry(got).kind == kindTomb) == future {
				t.Fatalf("expiry in the future %v: script returned %d, key holds %q", future, n, got)
			}
		}
	})
}

// A Delete's tombstone lasts TombstoneTTL by the server's clock, whatever
// the deleting machine's clock says: here it runs two TombstoneTTLs
// behind, and an absolute expiry taken from it would have been in the
// server's past (Redis would have deleted the tombstone at once).
func TestTombstoneOutlivesSkewedClock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		client, _ := b.client(t)
		c := newTier(t, client, newSource(), nil)
		ctx := context.Background()
		skew := 2 * DefaultTombstoneTTL
		wallClock = func() time.Time { return time.Now().Add(-skew) }
		defer func() { wallClock = time.Now }()
		if err := c.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		raw, ok := rawGet(t, client, c.prefix+"k")
		if !ok || parseEntry(raw).kind != kindTomb {
			t.Fatalf("no tombstone after Delete with a clock %v behind: %q", skew, raw)
		}
		ttl, err := client.PTTL(ctx, c.prefix+"k").Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= DefaultTombstoneTTL-time.Second || ttl > DefaultTombstoneTTL {
			t.Fatalf("tombstone expires in %v, want about %v", ttl, DefaultTombstoneTTL)
		}
	})
}
