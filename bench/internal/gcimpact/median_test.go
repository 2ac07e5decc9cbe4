package gcimpact

import (
	"testing"
	"time"
)

// TestForcedMedianOfAnEvenCount: with an even number of forced
// collections (the loop runs until a second has passed, so 6 or 8 are
// common: gc.json has them) the median is the mean of the middle two, as
// everywhere else in the reports, not the upper one.
func TestForcedMedianOfAnEvenCount(t *testing.T) {
	r := Result{Forced: []time.Duration{40, 10, 30, 20}}
	if got, want := r.ForcedMedian(), time.Duration(25); got != want {
		t.Errorf("ForcedMedian of 10, 20, 30, 40 = %v, want %v", got, want)
	}
	r = Result{Forced: []time.Duration{30, 10, 20}}
	if got, want := r.ForcedMedian(), time.Duration(20); got != want {
		t.Errorf("ForcedMedian of 10, 20, 30 = %v, want %v", got, want)
	}
}
