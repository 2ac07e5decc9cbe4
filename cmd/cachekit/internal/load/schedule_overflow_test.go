package load

import (
	"testing"
	"time"
)

// The lowest rate accepted is one request every 292 years: the requests
// after the first are due later and later, never before the start (the
// offset of the third, 584 years, does not fit a time.Duration and
// wrapped round, due 292 years before the start: sent at once).
func TestLowRateDueTimesDoNotWrap(t *testing.T) {
	o, err := Options{URL: "http://fake.invalid", Mode: ModeGet, Rate: 1.1e-10, Requests: 4}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 0)
	s := newScheduler(&o, start)
	prev := start
	for i := range 4 {
		j, ok := s.next(start)
		if !ok {
			t.Fatalf("job %d: run over", i)
		}
		if j.intended.Before(prev) {
			t.Fatalf("job %d due at %v, before job %d (%v)", i, j.intended, i-1, prev)
		}
		prev = j.intended
	}
}
