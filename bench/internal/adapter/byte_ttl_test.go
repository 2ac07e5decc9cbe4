package adapter

import (
	"testing"
	"testing/synctest"
	"time"
)

// The bigcache StringCache misses an entry whose TTL has passed, as every
// other TTL-capable adapter does. It read with BigCache.Get, which never
// looks at an entry's age (the cleaner is off), and reported a hit an hour
// after a Set with a TTL of 1 s.
func TestBigcacheExpiredEntryIsAMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := NewString("bigcache", StringConfig[string]{Capacity: 100, TTL: time.Second, Codec: StringCodec{}, EntryBytes: 24})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Set("k", "v")
		if _, ok := c.Get("k"); !ok {
			t.Fatal("Get right after Set missed")
		}
		time.Sleep(time.Hour) // the bubble's clock: far past the 1 s TTL
		if v, ok := c.Get("k"); ok {
			t.Errorf("Get an hour after a Set with a TTL of 1 s = %q, true; want a miss (every other TTL adapter misses)", v)
		}
	})
}

// The freecache StringCache keeps an entry for at least its TTL. freecache
// stamps the expiry from the current Unix second cut down, and the adapter
// gave it the TTL rounded up to whole seconds only, so an entry set at
// x.9 s with a TTL of 1.9 s expired at x+2.0 and a Get 1.5 s after the Set
// missed.
func TestFreecacheEntryLivesItsTTL(t *testing.T) {
	for _, ttl := range []time.Duration{2 * time.Second, 1900 * time.Millisecond} {
		t.Run(ttl.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, err := NewString("freecache", StringConfig[string]{Capacity: 100, TTL: ttl, Codec: StringCodec{}, EntryBytes: 24})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				// The bubble's clock starts on a whole second; move to .9.
				time.Sleep(900 * time.Millisecond)
				c.Set("k", "v")
				time.Sleep(1500 * time.Millisecond) // less than the TTL
				if _, ok := c.Get("k"); !ok {
					t.Errorf("Get 1.5 s after a Set with a TTL of %v missed: the entry expired before its TTL", ttl)
				}
			})
		})
	}
}
