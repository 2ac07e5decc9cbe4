package redis

import (
	"context"
	"testing"
	"time"
)

// With a TTL of at most twice Timeout, loads are never written to Redis
// (Options.TombstoneTTL). With TTL exactly twice Timeout the load window
// (min(TombstoneTTL, TTL) - 2*Timeout) is zero, and writeLoaded dropped a
// write only when its age was more than that: one whose age read zero (a
// Clock that had not moved between the load's read of Redis and the
// write) went on and landed. A window of zero now drops every write.
// (Found by a review helper.)
func TestLoadNotWrittenWithTTLTwiceTimeout(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	cl := standaloneClient(t)
	clock := &fakeClock{t: time.Unix(2e9, 0)}
	src := newSource()
	src.set("k", "v")
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Timeout = time.Second
		o.TTL = 2 * time.Second // exactly twice Timeout: "at most twice Timeout"
		o.Clock = clock
	})
	waitSubscribed(t, c)
	// A first write answered gives the estimate of the server's clock
	// that every later write is bounded by.
	if err := c.Set(ctx, "warm", "x"); err != nil {
		t.Fatal(err)
	}
	mustGet(t, c, "k", "v") // misses both tiers: loaded, its write queued
	eventually(t, 5*time.Second, "the loaded write handled", func() bool {
		st := c.Stats()
		return st.L2Writes+st.L2WritesRejected+st.L2WritesDropped+st.L2WriteErrors == 2
	})
	if raw, ok := rawGet(t, cl, c.prefix+"k"); ok {
		st := c.Stats()
		t.Fatalf("a loaded value was written to Redis (%.40q) with TTL = 2*Timeout; L2Writes %d (1 is the Set's), L2WritesDropped %d",
			raw, st.L2Writes, st.L2WritesDropped)
	}
}
