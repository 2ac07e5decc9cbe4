package cachekit

import "testing"

// A policy that orders entries by their reads sees the reads made while the
// cache is less than half full: they still decide what goes first once it
// is full. Key 1, read twice after key 2 was written, is more recently and
// more frequently used than 2 by every measure these policies take.
func TestEarlyReadsReachThePolicy(t *testing.T) {
	for _, pol := range []string{"lru", "lfu", "lrfu", "dlfu", "clock", "sieve", "s3fifo"} {
		c, err := New(Options[int, int]{MaxEntries: 8, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		c.Set(1, 1)
		c.Set(2, 2)
		c.settle()
		c.Get(1)
		c.Get(1)
		c.settle()
		for k := 3; k <= 9; k++ {
			c.Set(k, k)
			c.settle()
		}
		_, has1 := c.Peek(1)
		_, has2 := c.Peek(2)
		c.Close()
		if !has1 || has2 {
			t.Errorf("%s: key 1 (read twice) present %v, key 2 (never read) present %v: want 2 evicted, not 1", pol, has1, has2)
		}
	}
}
