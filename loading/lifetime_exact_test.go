package loading

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A lifetime's end went through a float64 even without TTLJitter, and a
// float64 holds a Duration past 2^53 ns (104 days) only to within a few
// nanoseconds: a TTL of 2^53+1 ns ended 1 ns early, one of 2^53+3 ns 1 ns
// late. Without jitter the end is now exact, as the core cache's is
// (TestTTLBoundaryLongTTL there).
func TestLongTTLBoundaryExactWithoutJitter(t *testing.T) {
	for _, ttl := range []time.Duration{1<<53 + 1, 1<<53 + 3} {
		t.Run(fmt.Sprint(int64(ttl)), func(t *testing.T) {
			clk := newBenchClock()
			src := newSource(nil)
			c := Must(Options[int, string]{Loader: src, TTL: ttl, Clock: clk})
			defer c.Close()
			mustGet(t, c, 1, "v1.1")
			clk.Advance(ttl - 1)
			if v, err := c.Get(context.Background(), 1); v != "v1.1" || err != nil {
				t.Errorf("at t+TTL-1ns: Get = %q, %v; want the first load's value, fresh", v, err)
			}
			clk.Advance(1)
			if v, _ := c.Get(context.Background(), 1); v == "v1.1" {
				t.Errorf("at t+TTL: Get = %q; want a reload (the value's TTL has ended)", v)
			}
		})
	}
}
