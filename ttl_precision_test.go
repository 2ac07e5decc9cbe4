package cachekit

import (
	"fmt"
	"testing"
	"time"
)

// TestTTLBoundaryLongTTL checks the TTL boundary (present at ttl-1ns,
// absent at ttl) for TTLs past 2^53 ns (about 104 days), which a float64
// cannot hold exactly: without jitter the deadline must be exact, not the
// TTL rounded to the nearest float64 (2^53+1 rounded down to 2^53 made the
// entry expire a nanosecond early; 2^53+3 rounded up to 2^53+4, a
// nanosecond late).
func TestTTLBoundaryLongTTL(t *testing.T) {
	for _, ttl := range []time.Duration{1<<53 + 1, 1<<53 + 3, 1<<62 + 12345} {
		for _, viaDefault := range []bool{false, true} {
			t.Run(fmt.Sprintf("ttl=%d/DefaultTTL=%v", int64(ttl), viaDefault), func(t *testing.T) {
				clk := newFakeClock()
				opts := Options[int, int]{Clock: clk}
				if viaDefault {
					opts.DefaultTTL = ttl
				}
				c := ctNew(t, opts)
				clk.Advance(time.Hour)
				if viaDefault {
					c.Set(1, 1)
				} else {
					c.SetWithTTL(1, 1, ttl)
				}
				clk.Advance(ttl - 1)
				ctExpect(t, c, 1, 1, true, "at ttl-1ns")
				clk.Advance(1)
				ctExpect(t, c, 1, 1, false, "at ttl")
			})
		}
	}
}
