package bytecache

import (
	"testing"
	"time"
)

// A Get that finds its entry expired counts the colliding keys it compared
// once, as any other Get: Collisions counts them once per call.
func TestCollisionsExpiredGet(t *testing.T) {
	clk := newClock()
	c := newCache(t, Options{MaxBytes: 1 << 20, Shards: 1, Now: clk.Now})
	c.forceCollisions(0) // every key has the same hash
	set(t, c, "a", "1", 0)
	set(t, c, "b", "2", time.Second) // compares "a"
	clk.Advance(time.Second)
	base := c.Stats().Collisions
	if _, ok := get(c, "b"); ok {
		t.Fatal("Get of an expired entry hit")
	}
	if n := c.Stats().Collisions - base; n != 1 {
		t.Errorf("Get of an expired entry after one colliding key counted %d collisions, want 1", n)
	}
	if s := c.Stats(); s.Expirations != 1 || s.Misses != 1 {
		t.Errorf("Expirations = %d, Misses = %d; want 1, 1", s.Expirations, s.Misses)
	}
}
