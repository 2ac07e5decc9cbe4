package cachekit

import (
	"math"
	"testing"
)

// InitialCapacity sizes the index however large MaxEntries is: rounding
// MaxEntries up to a per-segment share overflowed near math.MaxInt, which
// silently gave every segment the smallest table.
func TestInitialCapacityWithHugeMaxEntries(t *testing.T) {
	for _, max := range []int{math.MaxInt32, math.MaxInt - 1000, math.MaxInt} {
		c := Must(Options[int, int]{MaxEntries: max, InitialCapacity: 100_000})
		defer c.Close()
		if n := c.indexSlots(); n < 100_000 {
			t.Errorf("MaxEntries %d: %d slots for InitialCapacity 100000", max, n)
		}
	}
}
