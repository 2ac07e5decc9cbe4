package load

import (
	"fmt"
	"testing"
)

// Once maxErrorKinds kinds were counted, a new kind went to "other", and
// so did kindNotSent: a run whose generator fell behind after many kinds
// of failure did not say so. kindNotSent keeps its own name.
func TestNotSentKeepsItsKindPastTheCap(t *testing.T) {
	rec := newRecorder()
	for i := range maxErrorKinds {
		rec.countErrors(fmt.Sprintf("kind %d", i), "x", 1)
	}
	rec.countErrors("one too many", "x", 1)
	rec.countErrors(kindNotSent, notSentText, 3)
	if e := rec.errors["other"]; e == nil || e.Count != 1 {
		t.Errorf(`"other" = %+v, want the one kind past the cap`, e)
	}
	if e := rec.errors[kindNotSent]; e == nil || e.Count != 3 {
		t.Errorf("%q = %+v, want its 3 requests under its own name", kindNotSent, e)
	}
	if rec.counts.errors != maxErrorKinds+1+3 {
		t.Errorf("errors %d, want %d", rec.counts.errors, maxErrorKinds+1+3)
	}
}
