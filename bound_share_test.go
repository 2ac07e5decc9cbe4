package cachekit

import (
	"testing"
	"testing/synctest"
)

// One writer took a cache bounded by count up to MaxEntries/16 past its
// bound (31 entries for 500, 6%): a trace replayed through the cache scored
// as a larger cache's, above Bélády's optimum at small capacities. The
// batch is now at most MaxEntries/1024: after any Set the index holds at
// most MaxEntries + MaxEntries/1024 entries, MaxEntries up to 2,047.
func TestOneWriterOvershootWithinShare(t *testing.T) {
	for _, bound := range []int{32, 250, 500, 2047, 2048, 10000, 40000} {
		synctest.Test(t, func(t *testing.T) {
			c := ctNew(t, Options[int, int]{MaxEntries: bound})
			ctPin(c)
			limit := bound + bound/1024
			for k := range 3 * bound {
				c.Set(k, k)
				if l := c.Len(); l > limit {
					t.Fatalf("MaxEntries %d: Len %d after Set(%d), above %d (the bound plus a 1024th)", bound, l, k, limit)
				}
			}
			c.Close()
		})
	}
}
