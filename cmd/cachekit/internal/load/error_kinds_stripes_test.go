package load

import (
	"fmt"
	"testing"
	"time"
)

// maxErrorKinds was applied to each recorder stripe separately: the merged
// report could hold more than maxErrorKinds kinds, and one kind could be
// counted under its own name and under "other" at once.
func TestErrorKindsCapAcrossStripes(t *testing.T) {
	o, err := Options{URL: "http://x", Mode: ModeGet, Requests: 100, Concurrency: 2}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{o: o, stripes: newRecorders(2)}
	fail := func(rec *recorder, kind string) {
		rec.record(job{}, outcome{errKind: kind}, time.Millisecond, time.Millisecond, 0, false, false)
	}
	// Worker 0 (stripe 0) saw maxErrorKinds kinds of status, then a 599;
	// worker 1 (stripe 1) saw 599s only, and then other kinds again.
	for i := range maxErrorKinds {
		fail(r.stripes[0], fmt.Sprintf("status %d", 500+i))
	}
	fail(r.stripes[0], "status 599")
	fail(r.stripes[1], "status 599")
	for i := range maxErrorKinds {
		fail(r.stripes[1], fmt.Sprintf("status %d", 400+i))
	}
	start := time.Unix(1000, 0)
	rep := r.report(start, start.Add(time.Second))
	if n := len(rep.ErrorKinds); n > maxErrorKinds+1 {
		t.Errorf("%d error kinds in the report, more than the cap of %d (and \"other\")", n, maxErrorKinds)
	}
	// The two 599s are one kind: both under its name, or both in "other".
	if e := rep.ErrorKinds["status 599"]; e != nil && e.Count != 2 {
		t.Errorf(`"status 599" counted %d time(s) under its name, the rest in "other" (%+v): one kind split in two rows`,
			e.Count, rep.ErrorKinds["other"])
	}
}
