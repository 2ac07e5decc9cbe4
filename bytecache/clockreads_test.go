package bytecache

import (
	"sync/atomic"
	"testing"
	"time"
)

// countingClock is a fakeClock that counts its reads.
type countingClock struct {
	fakeClock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time {
	c.reads.Add(1)
	return c.fakeClock.Now()
}

func newCountingClock() *countingClock {
	c := &countingClock{}
	c.ns.Store(newClock().ns.Load())
	return c
}

// A read that found key's entry expired removes it on a second look; if key
// was set again without a TTL in between, that look reads no clock
// (Options.Now is read only where a TTL is involved).
func TestExpireSetAgainNoClock(t *testing.T) {
	clk := newCountingClock()
	c := newCache(t, Options{MaxBytes: 1 << 20, Shards: 1, Now: clk.Now})
	key := []byte("k")
	set(t, c, "k", "v", -1) // set again without a TTL after the first look
	h := c.hash.sum(key)
	before := clk.reads.Load()
	c.expire(c.shardOf(h), key, uint32(h))
	if n := clk.reads.Load() - before; n != 0 {
		t.Errorf("expire of an entry without a TTL read the clock %d times, want 0", n)
	}
	if v, ok := get(c, "k"); !ok || v != "v" {
		t.Errorf("Get after expire = %q, %v; want \"v\", true", v, ok)
	}
}

// Once a shard has no live entry left (deleted, expired, evicted), Len reads
// no clock and sweeps nothing, whatever TTLs its entries had.
func TestLenEmptyShardNoClock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, c *Cache, clk *countingClock)
	}{
		{"delete", func(t *testing.T, c *Cache, clk *countingClock) {
			c.Delete([]byte("a"))
			c.Delete([]byte("b"))
		}},
		{"get expired", func(t *testing.T, c *Cache, clk *countingClock) {
			c.Delete([]byte("a"))
			clk.Advance(time.Minute) // b expired; a (dead) would not have
			get(c, "b")
		}},
		{"sweep", func(t *testing.T, c *Cache, clk *countingClock) {
			c.Delete([]byte("a"))
			clk.Advance(time.Minute)
			if n := c.Len(); n != 0 {
				t.Fatalf("Len = %d, want 0", n)
			}
		}},
		{"evict", func(t *testing.T, c *Cache, clk *countingClock) {
			// A value that fills the shard evicts both; delete it.
			set(t, c, "big", string(make([]byte, 1024-16)), -1)
			c.Delete([]byte("big"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newCountingClock()
			c := newCache(t, Options{MaxBytes: 1 << 10, Shards: 1, Now: clk.Now})
			set(t, c, "a", "1", time.Hour)
			set(t, c, "b", "2", time.Second)
			tc.remove(t, c, clk)
			mustCheck(t, c)
			before := clk.reads.Load()
			for range 3 {
				if n := c.Len(); n != 0 {
					t.Fatalf("Len = %d, want 0", n)
				}
			}
			if n := clk.reads.Load() - before; n != 0 {
				t.Errorf("Len of an empty cache read the clock %d times, want 0", n)
			}
		})
	}
}

// Options.Now: "It is read only where a TTL is involved: ... by Get, Has,
// Delete and Len when they find an entry with one". A shard whose only
// live entry has no TTL (the entry with a TTL was deleted, or its key set
// again without one) holds no entry with a TTL: Len must not read the
// clock.
func TestLenNoTTLEntryLeftNoClock(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, c *Cache)
	}{
		{"set again without TTL", func(t *testing.T, c *Cache) {
			set(t, c, "a", "1", time.Hour)
			set(t, c, "a", "2", -1)
		}},
		{"TTL entry deleted", func(t *testing.T, c *Cache) {
			set(t, c, "a", "1", time.Hour)
			set(t, c, "b", "2", -1)
			c.Delete([]byte("a"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newCountingClock()
			c := newCache(t, Options{MaxBytes: 1 << 10, Shards: 1, Now: clk.Now})
			tc.prep(t, c)
			before := clk.reads.Load()
			for range 3 {
				if n := c.Len(); n != 1 {
					t.Fatalf("Len = %d, want 1", n)
				}
			}
			if n := clk.reads.Load() - before; n != 0 {
				t.Errorf("Len of a cache holding no entry with a TTL read the clock %d times, want 0", n)
			}
		})
	}
}
