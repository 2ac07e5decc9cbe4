package loading

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// With the system clock (margin 1s), a lifetime within 1s of the largest
// Duration overflowed put's core TTL to 1ns: the value was dropped at once
// and every Get loaded again. (In a synctest bubble: the core's cached
// clock moves on deterministically.)
func TestHugeTTLOverflowsCoreTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(nil)
		c, err := New(Options[int, string]{Loader: src, TTL: time.Duration(math.MaxInt64) - time.Second/2})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		mustGet(t, c, 1, "v1.1")
		time.Sleep(20 * time.Millisecond) // the core's cached clock moves on
		mustGet(t, c, 1, "v1.1")
	})
}
