package load

import (
	"context"
	"math"
	"net/http"
	"testing"
	"time"
)

// The members of a group (one key) are due at the same moment in a paced
// run, so that with enough workers they are in flight at once, like
// concurrent callers of one hot key; the average rate stays Rate.
func TestPacedGroupDueAtOnce(t *testing.T) {
	o, err := Options{URL: "http://x", Rate: 1000, Group: 4, Requests: 8, Concurrency: 8, Seed: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(0, 0)
	s := newScheduler(&o, start)
	var due []time.Duration
	for {
		j, ok := s.next(start)
		if !ok {
			break
		}
		due = append(due, j.intended.Sub(start))
	}
	want := []time.Duration{0, 0, 0, 0, 4 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}
	if len(due) != len(want) {
		t.Fatalf("due at %v, want %v", due, want)
	}
	for i := range due {
		if due[i] != want[i] {
			t.Fatalf("due at %v, want %v (each group of 4 at once, every 4 ms at 1000 req/s)", due, want)
		}
	}
}

// Duration bounds a paced run: the requests that were due before it but
// that the workers had not sent by then are not sent afterwards. A 1s run
// at 100 req/s against a server that answers in 10s (the timeout) with one
// worker lasts 10s, not 1000s.
func TestDurationBoundsPacedRun(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Mode: ModeGet, Rate: 100, Duration: time.Second, Concurrency: 1,
		Timeout: 10 * time.Second, Clock: clock,
		Client: &http.Client{Transport: slowTransport{clock: clock, delay: 10 * time.Second}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Seconds > 1+10+1 {
		t.Errorf("a --duration 1s run (timeout 10s) lasted %.0fs: %d requests, send lag max %.0fs",
			rep.Seconds, rep.Requests, rep.SendLag.Max/1000)
	}
	// The 99 requests not sent are counted as failed, not left out.
	if rep.Requests != 100 || rep.NotSent != 99 || rep.Errors != 99 || rep.ErrorKinds[kindNotSent].Count != 99 {
		t.Errorf("%d requests, %d not sent, errors %d %v; want 100, 99 not sent", rep.Requests, rep.NotSent, rep.Errors, rep.ErrorKinds)
	}
}

// The accounting of the requests not sent by the end of a paced run:
// requests due every 1 ms for 20 ms to a server that takes 5 ms, one
// worker. Requests 0 to 3 are sent at 0, 5, 10 and 15 ms (latencies 5, 9,
// 13 and 17 ms from their due times); at 20 ms the run stops sending:
// requests 4 to 19 are not sent, each charged the time from when it was
// due to the end, 16 down to 1 ms.
func TestNotSentAccounting(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * 1e6) }
	near := func(got float64, want time.Duration) bool { // HDR: 3 significant digits
		w := want.Seconds() * 1000
		return got >= w*0.999 && got <= w*1.001
	}
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: 20 * time.Millisecond,
		Concurrency: 1, Clock: clock,
		Client: &http.Client{Transport: slowTransport{clock: clock, delay: 5 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 20 || rep.NotSent != 16 || rep.Errors != 16 || rep.ErrorKinds[kindNotSent] == nil {
		t.Fatalf("%d requests, %d not sent, errors %d %v; want 20, 16 not sent", rep.Requests, rep.NotSent, rep.Errors, rep.ErrorKinds)
	}
	// 20 latencies: 5, 9, 13, 17 and 1..16 ms.
	if l := rep.Latency; l.Count != 20 || !near(l.Max, ms(17)) || !near(l.Mean, ms((5+9+13+17+136)/20.0)) {
		t.Errorf("latency %+v; want 20, max 17ms, mean 9ms", l)
	}
	// Only the 4 requests sent have a response time; the throughput counts them only.
	if rt := rep.ResponseTime; rt == nil || rt.Count != 4 || !near(rt.Max, ms(5)) {
		t.Errorf("response time %+v; want 4 of 5ms", rt)
	}
	if rep.Seconds != 0.02 || math.Abs(rep.Throughput-200) > 1e-9 {
		t.Errorf("%.4fs, %.1f req/s; want 0.02s, 200 req/s (4 requests sent)", rep.Seconds, rep.Throughput)
	}
	// All 20 were late: their send lag counts to the end for those not sent.
	if lag := rep.SendLag; lag == nil || lag.Count != 20 || !near(lag.Max, ms(16)) {
		t.Errorf("send lag %+v; want 20, max 16ms", lag)
	}

	// Closed loop: latency starts at the send, so the requests not sent
	// have none; they are counted all the same.
	clock = &fakeClock{now: time.Unix(1000, 0)}
	rep, err = Run(context.Background(), Options{
		URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: 20 * time.Millisecond, Closed: true,
		Concurrency: 1, Clock: clock,
		Client: &http.Client{Transport: slowTransport{clock: clock, delay: 5 * time.Millisecond}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 20 || rep.NotSent != 16 || rep.Latency.Count != 4 || !near(rep.Latency.Max, ms(5)) {
		t.Errorf("closed loop: %d requests, %d not sent, latency %+v; want 20, 16 not sent, 4 latencies of 5ms",
			rep.Requests, rep.NotSent, rep.Latency)
	}
}

// When a paced run is cancelled, the requests that were due and not sent
// yet are counted as not sent, as at the end of the duration: one worker,
// a server that takes 5 ms, requests due every 1 ms, cancelled when the
// 10th request completes (at 50 ms): requests 10 to 49 were due and are
// not sent.
func TestCancelledPacedRunCountsNotSent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &fakeClock{now: time.Unix(1000, 0)}
	n := 0
	rep, err := Run(ctx, Options{
		URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: time.Hour, Concurrency: 1, Clock: clock,
		Client: &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
			clock.advance(5 * time.Millisecond)
			if n++; n == 10 {
				cancel()
			}
			return reply(r, http.StatusOK, "ok"), nil
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 10 || rep.Requests != 50 || rep.NotSent != 40 || rep.Errors != 40 {
		t.Errorf("%d sent; report: %d requests, %d not sent, %d errors; want 10 sent, 50 requests, 40 not sent",
			n, rep.Requests, rep.NotSent, rep.Errors)
	}
	if rep.Seconds != 0.05 {
		t.Errorf("%.4fs, want 0.05s", rep.Seconds)
	}
}
