package cachekit

import (
	"testing"
	"testing/synctest"
	"time"
)

// A Set with a TTL in a cache that holds no other entry with one must start
// the fast clock before it runs OnEvict callbacks (for the value it
// replaced, or for what its maintenance pass evicts): otherwise the cached
// clock stands still while the callback runs, and Get returns the new entry
// long after its TTL has passed (up to the background goroutine's one-second
// tick, instead of about a millisecond).
func TestFastClockStartsBeforeReplacedCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Must(Options[int, int]{OnEvict: func(k, v int, cause Cause) {
			if cause == CauseReplaced {
				time.Sleep(time.Second) // a slow listener
			}
		}})
		ctPin(c)
		defer c.Close()
		c.Set(1, 0)                 // no TTL: the clock stays slow
		time.Sleep(3 * time.Second) // the background goroutine ticks at 1s
		synctest.Wait()
		go c.SetWithTTL(1, 1, 10*time.Millisecond) // reports 1=0 replaced, for 1s
		time.Sleep(500 * time.Millisecond)
		if v, ok := c.Get(1); ok {
			t.Errorf("Get(1) = %d, true 500ms after a 10ms TTL", v)
		}
		time.Sleep(time.Second)
	})
}

func TestFastClockStartsBeforeEvictionCallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := Must(Options[int, int]{MaxEntries: 4, Policy: "lru", OnEvict: func(k, v int, cause Cause) {
			if cause == CauseCapacity {
				time.Sleep(time.Second) // a slow listener
			}
		}})
		ctPin(c)
		defer c.Close()
		for i := range 4 {
			c.Set(i, i) // no TTL: the clock stays slow
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		go c.SetWithTTL(10, 10, 10*time.Millisecond) // its pass evicts key 0
		time.Sleep(500 * time.Millisecond)
		if v, ok := c.Get(10); ok {
			t.Errorf("Get(10) = %d, true 500ms after a 10ms TTL", v)
		}
		time.Sleep(2 * time.Second)
	})
}
