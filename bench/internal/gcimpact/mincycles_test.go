package gcimpact

import "testing"

// TestNegativeMinCycles: a negative MinCycles, converted to uint64,
// is a count no window reaches, so every churn lasted MaxWindow while
// the report said "until -1 collections have finished". RunJob refuses
// it, as it does the other bad fields.
func TestNegativeMinCycles(t *testing.T) {
	j := tinyJob(None, 0)
	j.MinCycles = -1
	if r, err := RunJob(j); err == nil {
		t.Errorf("a job with MinCycles -1 ran: window %v, %d cycles", r.Window, r.Cycles)
	}
}
