package redis

import (
	"context"
	"testing"
	"time"
)

// A ByteTier's Set with a TTL under a millisecond writes an expiry after
// the current millisecond: one at or before it (the current millisecond
// rounded down) made Redis delete the key at once, the value it held with
// it, while Set returned nil. The clock runs an hour ahead, so that Redis
// keeps what is written; its sub-millisecond part varies.
func TestByteTierSubMillisecondTTL(t *testing.T) {
	client := standaloneClient(t)
	bt, _ := newByteTier(t, client, nil)
	ctx := context.Background()
	defer func() { wallClock = time.Now }()
	for _, offset := range []time.Duration{0, 600 * time.Microsecond, 999 * time.Microsecond} {
		base := time.Now().Add(time.Hour).Truncate(time.Millisecond).Add(offset)
		wallClock = func() time.Time { return base }
		for _, ttl := range []time.Duration{time.Nanosecond, 400 * time.Microsecond, 999 * time.Microsecond} {
			if err := bt.Set(ctx, []byte("k"), []byte("v"), ttl); err != nil {
				t.Fatal(err)
			}
			raw, ok := rawGet(t, client, bt.prefix+"k")
			if !ok {
				t.Fatalf("offset %v, ttl %v: nothing in Redis after Set", offset, ttl)
			}
			exp := expiry([]byte(raw))
			if exp <= base.UnixMilli() {
				t.Errorf("offset %v, ttl %v: expiry %d ms is not after the current millisecond %d", offset, ttl, exp, base.UnixMilli())
			}
			if got, err := client.Do(ctx, "pexpiretime", bt.prefix+"k").Int64(); err != nil || got != exp {
				t.Errorf("offset %v, ttl %v: Redis expires the key at %d ms (%v), its envelope says %d ms", offset, ttl, got, err, exp)
			}
		}
	}
}

// The same for a Cache whose TTL is under a millisecond: its Set wrote an
// expiry at or before the current millisecond, so Redis held nothing.
func TestCacheSubMillisecondTTL(t *testing.T) {
	client := standaloneClient(t)
	c := newTier(t, client, newSource(), func(o *Options[string]) { o.TTL = 400 * time.Microsecond })
	ctx := context.Background()
	defer func() { wallClock = time.Now }()
	for _, offset := range []time.Duration{0, 600 * time.Microsecond} {
		base := time.Now().Add(time.Hour).Truncate(time.Millisecond).Add(offset)
		wallClock = func() time.Time { return base }
		if err := c.Set(ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
		raw, ok := rawGet(t, client, c.prefix+"k")
		if !ok {
			t.Fatalf("offset %v: nothing in Redis after Set", offset)
		}
		if exp := expiry([]byte(raw)); exp <= base.UnixMilli() {
			t.Errorf("offset %v: expiry %d ms is not after the current millisecond %d", offset, exp, base.UnixMilli())
		}
	}
}
