package load

import (
	"context"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"
)

// A paced run lasts as long as its schedule: at 2 req/s for 2 s (or for 4
// requests), 4 requests are due at 0, 0.5, 1 and 1.5 s; the last completes
// at 1.501 s, but the run's rate is 2 req/s over 2 s, not 4 requests over
// 1.501 s (2.66 req/s), and with a warm-up of 1 s, 2 requests over 1 s,
// not over 0.501 s (4 req/s).
func TestPacedRunSecondsCoverSchedule(t *testing.T) {
	for _, o := range []Options{
		{Duration: 2 * time.Second},
		{Requests: 4},
		{Duration: 2 * time.Second, Warmup: time.Second},
	} {
		clock := &fakeClock{now: time.Unix(1000, 0)}
		o.URL, o.Mode, o.Rate, o.Concurrency, o.Clock = "http://fake.invalid", ModeGet, 2, 1, clock
		o.Client = &http.Client{Transport: slowTransport{clock: clock, delay: time.Millisecond}}
		rep, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		want := 2 - o.Warmup.Seconds()
		if rep.Seconds != want || math.Abs(rep.Throughput-2) > 1e-9 {
			t.Errorf("duration %v, requests %d, warm-up %v: %d requests in %.3fs, %.3f req/s; want %.0fs, 2 req/s",
				o.Duration, o.Requests, o.Warmup, rep.Requests, rep.Seconds, rep.Throughput, want)
		}
	}
}

// tickClock is a fakeClock whose every reading is tick later than the
// previous one: the time the generator itself spends.
type tickClock struct {
	fakeClock
	tick time.Duration
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.tick)
	return c.now
}

// The requests of a paced run that were due but not sent are charged up to
// the cut-off, and so is the run: the time the workers take to count them
// afterwards is not part of Seconds, which would lower the throughput (a
// run at --rate 1e8 for 1 s, far behind, reported 27 s). Requests due
// every 1 ms for 100 ms, one worker, the first request takes 200 ms: the
// 99 others are not sent; counting them takes about 2 ms each here (each
// reading of the clock is 1 ms later than the previous one).
func TestNotSentCountingNotInSeconds(t *testing.T) {
	clock := &tickClock{fakeClock: fakeClock{now: time.Unix(1000, 0)}, tick: time.Millisecond}
	var once sync.Once
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: 100 * time.Millisecond,
		Concurrency: 1, Clock: clock,
		Client: &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
			once.Do(func() { clock.advance(200 * time.Millisecond) })
			return reply(r, http.StatusOK, "ok"), nil
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.NotSent != 99 || rep.Requests != 100 {
		t.Fatalf("%d requests, %d not sent; want 100, 99 not sent", rep.Requests, rep.NotSent)
	}
	if rep.Seconds > 0.25 {
		t.Errorf("%.3fs measured for a run whose only request sent completed at about 0.2s", rep.Seconds)
	}
}
