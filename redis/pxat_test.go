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
