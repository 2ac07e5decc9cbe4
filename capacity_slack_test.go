package cachekit

import (
	"testing"
	"testing/synctest"
)

// TestCapacitySlackSequential asserts the transient slack of the bound
// for one writer (TestCapacityConcurrent only logs it for several): every
// writeBatch-th queued record makes its writer run maintenance, so after
// any Set returns at most writeBatch-1 records are unapplied, and the index
// holds at most MaxEntries+writeBatch-1 entries. For a cache bounded by
// weight writeBatch is 1: the bound holds after every Set. In a synctest
// bubble the background goroutine sleeps on its ticker while the writer
// runs (no time passes), so it never takes the maintenance lock from the
// writer and the result does not depend on scheduling.
func TestCapacitySlackSequential(t *testing.T) {
	for _, bound := range []int{1, 15, 16, 500, 5000} {
		synctest.Test(t, func(t *testing.T) {
			c := ctNew(t, Options[int, int]{MaxEntries: bound})
			ctPin(c)
			slack := c.c.writeBatch - 1
			peak := 0
			for k := range 20 * bound {
				c.Set(k, k)
				l := c.Len()
				peak = max(peak, l)
				if l > bound+slack {
					t.Fatalf("MaxEntries %d: Len %d after Set(%d), above the bound plus writeBatch-1 (%d)", bound, l, k, bound+slack)
				}
			}
			t.Logf("MaxEntries %d, writeBatch %d: peak Len %d", bound, c.c.writeBatch, peak)
			c.Close()
		})
	}
	synctest.Test(t, func(t *testing.T) {
		const maxWeight = 1000
		c := ctNew(t, Options[int, int]{MaxWeight: maxWeight, Weigher: func(k, _ int) uint32 { return uint32(1 + k%50) }})
		ctPin(c)
		for k := range 5000 {
			c.Set(k, k)
			var sum uint64
			for k := range c.All() {
				sum += uint64(1 + k%50)
			}
			if sum > maxWeight {
				t.Fatalf("weight %d in the index after Set(%d), above MaxWeight %d", sum, k, maxWeight)
			}
		}
		c.Close()
	})
}
