package cachekit

import "testing"

// TestClassicPoliciesKeepNewKey: the cache adds an entry to its policy
// before it evicts. With every resident read twice, LFU-DA, LRFU and DLFU
// (and plain LFU: lrfu:0, dlfu:inf) chose the entry just written as the
// victim, so Set then Get missed and no new key was ever kept.
func TestClassicPoliciesKeepNewKey(t *testing.T) {
	for _, pol := range []string{"lfu", "lrfu", "lrfu:0", "dlfu", "dlfu:inf", "lru", "fifo", "clock", "sieve", "s3fifo", "random"} {
		c, err := New(Options[int, int]{MaxEntries: 2, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		c.Set(1, 1)
		c.Set(2, 2)
		c.settle()
		for range 2 {
			c.Get(1)
			c.Get(2)
		}
		c.settle()
		var missed []int
		for k := 3; k <= 5; k++ {
			c.Set(k, k)
			c.settle()
			if _, ok := c.Get(k); !ok {
				missed = append(missed, k)
			}
		}
		c.Close()
		if len(missed) > 0 {
			t.Errorf("%s: Get right after Set missed keys %v", pol, missed)
		}
	}
}
