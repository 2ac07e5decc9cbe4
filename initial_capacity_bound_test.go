package cachekit

import (
	"math"
	"testing"
)

func TestInitialCapacityWithHugeMaxEntries(t *testing.T) {
	for _, max := range []int{1 << 40, math.MaxInt - 1000, math.MaxInt} {
		c := Must(Options[int, int]{MaxEntries: max, InitialCapacity: 100_000})
		defer c.Close()
		if n := c.indexSlots(); n < 100_000 {
			t.Errorf("MaxEntries %d: %d slots for InitialCapacity 100000", max, n)
		}
	}
}
