package redis

import (
	"math"
	"testing"
	"time"
)

// The pause between subscription attempts doubles up to 32 times the
// first (Options.ResubscribeDelay), for the longest first pauses too: at
// about 9 years and more, 32 times it overflowed, and the pauses after
// the first became negative (a loop of attempts without a pause).
func TestNextDelay(t *testing.T) {
	const maxD = time.Duration(math.MaxInt64)
	for _, first := range []time.Duration{MinPeriod, DefaultResubscribeDelay, time.Hour, 10 * 365 * 24 * time.Hour, maxD / 32, maxD/32 + 1, maxD / 2, maxD} {
		want := maxD
		if first <= maxD/32 {
			want = 32 * first
		}
		delay := first
		for i := range 70 {
			next := nextDelay(delay, first)
			if next < delay || next > want || (delay < want/2 && next != 2*delay) {
				t.Fatalf("first %v: pause %d after %v is %v; want twice as long, up to %v", first, i+1, delay, next, want)
			}
			delay = next
		}
		if delay != want {
			t.Errorf("first %v: pauses settle at %v; want %v", first, delay, want)
		}
	}
}
