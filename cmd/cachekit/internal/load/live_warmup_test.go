package load

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The live line shows the requests done in its interval, the warm-up's
// too. Its rate, errors and running total counted them, but its latencies
// left them out (record put in the interval's histogram only the requests
// the report counts): for the whole --warmup, with a server answering in
// 5 ms, it read "1000 req/s  p50 0.000ms  p99 0.000ms  max 0.001ms" (the
// max of an empty histogram).
func TestLiveLineLatencyInWarmup(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var buf bytes.Buffer
	o, err := Options{URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: 10 * time.Second,
		Warmup: 5 * time.Second, Live: &buf, Clock: clock}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{o: o, start: clock.now, warmEnd: clock.now.Add(o.Warmup), liveLast: clock.now, liveHist: newHist(),
		stripes: []*recorder{newRecorder()}}
	rec := r.stripes[0]
	// 1000 requests in the first second (the warm-up), each taking 5 ms.
	for seq := int64(0); seq < 1000; seq++ {
		due := clock.now.Add(time.Duration(seq) * time.Millisecond)
		rec.record(job{seq: seq, intended: due}, outcome{ok: true, hit: true}, 5*time.Millisecond, 5*time.Millisecond, 0, true, true)
	}
	clock.advance(time.Second)
	r.writeLive()
	line := buf.String()
	if !strings.Contains(line, "1000 req/s") {
		t.Fatalf("live line %q: want 1000 req/s", line)
	}
	for _, bogus := range []string{"p50 0.000ms", "p99 0.000ms", "max 0.001ms", "max 0.000ms"} {
		if strings.Contains(line, bogus) {
			t.Errorf("live line %q: 1000 requests of 5 ms done in the interval, but it shows %q", line, bogus)
		}
	}
}
