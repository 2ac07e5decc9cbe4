package load

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The live line's figures are those of the requests done in its interval:
// a request due but never sent was not done, and the backlog counted at the
// end of a paced run showed as a burst of requests (and errors) in the
// last interval. One request sent and 999 not sent in a 1 s interval: the
// line reads 1 req/s and no error.
func TestLiveLineLeavesOutNotSent(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var buf bytes.Buffer
	o, err := Options{URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: time.Second, Live: &buf, Clock: clock}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{o: o, start: clock.now, liveLast: clock.now, liveHist: newHist(), stripes: []*recorder{newRecorder()}}
	rec := r.stripes[0]
	rec.record(job{seq: 0, intended: clock.now}, outcome{ok: true, hit: true}, time.Millisecond, time.Millisecond, 0, true, false)
	for seq := int64(1); seq < 1000; seq++ {
		due := clock.now.Add(time.Duration(seq) * time.Millisecond)
		rec.recordNotSent(job{seq: seq, intended: due}, clock.now.Add(time.Second).Sub(due), true, false)
	}
	clock.advance(time.Second)
	r.writeLive()
	line := buf.String()
	if !strings.Contains(line, "        1 req/s") || !strings.Contains(line, "errors 0 ") {
		t.Errorf("live line %q: want 1 req/s and errors 0 (999 requests were due but not sent)", line)
	}
}
