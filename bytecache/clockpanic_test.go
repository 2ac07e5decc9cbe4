package bytecache

import (
	"sync/atomic"
	"testing"
	"time"
)

// A clock (Options.Now) that panics must not leave a shard locked: the
// panic reaches the caller, and once recovered the cache stays usable. Get,
// Has, Len and Set read the clock with a shard's lock held; Delete already
// releases it on a panic.
func TestClockPanicReleasesLock(t *testing.T) {
	var broken atomic.Bool
	clk := newClock()
	now := func() time.Time {
		if broken.Load() {
			panic("clock broken")
		}
		return clk.Now()
	}
	for _, tc := range []struct {
		name string
		op   func(c *Cache)
	}{
		{"Get", func(c *Cache) { c.Get(nil, []byte("k")) }},
		{"Has", func(c *Cache) { c.Has([]byte("k")) }},
		{"Len", func(c *Cache) { c.Len() }},
		{"Delete", func(c *Cache) { c.Delete([]byte("k")) }},
		// A Set without TTL that evicts an entry with one reads the clock.
		{"Set", func(c *Cache) { c.Set([]byte("big"), make([]byte, 1008), -1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			broken.Store(false)
			c, err := New(Options{MaxBytes: 1 << 10, Shards: 1, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			set(t, c, "k", "v", time.Hour)
			broken.Store(true)
			func() {
				defer func() {
					if recover() == nil {
						t.Fatal("the clock's panic did not reach the caller")
					}
				}()
				tc.op(c)
			}()
			broken.Store(false)
			sh := &c.shards[0]
			if !sh.mu.TryLock() {
				t.Fatalf("%s left the shard locked after the clock panicked: every later write to it hangs", tc.name)
			}
			sh.mu.Unlock()
			set(t, c, "k2", "v", 0)
			c.Close()
		})
	}
}
