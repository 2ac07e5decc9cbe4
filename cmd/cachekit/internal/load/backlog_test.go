package load

import (
	"context"
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// callClock is a fakeClock that counts the calls made to it.
type callClock struct {
	fakeClock
	calls atomic.Int64
}

func (c *callClock) Now() time.Time {
	c.calls.Add(1)
	return c.fakeClock.Now()
}

func (c *callClock) SleepUntil(ctx context.Context, t time.Time) bool {
	c.calls.Add(1)
	return c.fakeClock.SleepUntil(ctx, t)
}

// The requests of a paced run that were due but not sent are counted at
// once, whatever their number, with the figures that counting them one by
// one gave: a run at --rate 1e8 for 1 s took 27 s to count its backlog,
// past the end that Options.Duration promises. One worker; the request
// numbered stall holds it until after the end; every other request takes
// no time. The report must match the figures computed here request by
// request, and the run must read the clock a number of times that does not
// grow with the backlog (on the old code, a few times per request not
// sent).
func TestBacklogCountedAtOnce(t *testing.T) {
	cases := []struct {
		name     string
		o        Options
		stall    int           // the request (numbered from 0) that stalls
		stallFor time.Duration // how long it takes
		sentLat  []time.Duration
		sentLag  []time.Duration // of the sent requests after the warm-up
	}{{
		// Groups of 3 due every 30µs; the warm-up covers requests 0 to 11;
		// request 3 stalls past the end: request 4 is in hand, the backlog
		// starts in the middle of its group and covers the rest of the
		// warm-up (left out) and requests 12 to 100001.
		name:  "warm-up and groups",
		o:     Options{Rate: 1e5, Group: 3, Warmup: 100 * time.Microsecond, Duration: time.Second},
		stall: 3, stallFor: time.Second,
	}, {
		// Every second for 2 hours; request 0 takes 3 hours: the waits of
		// the requests not sent due in the first hour exceed the range.
		name:  "beyond range",
		o:     Options{Rate: 1, Duration: 2 * time.Hour},
		stall: 0, stallFor: 3 * time.Hour,
		sentLat: []time.Duration{3 * time.Hour}, sentLag: []time.Duration{0},
	}, {
		// Closed loop, writes: the requests not sent have no latency.
		name:  "closed loop",
		o:     Options{Rate: 1e4, Duration: time.Second, Closed: true, Mode: ModeAPI, WriteRatio: 1, WriteMethod: WritePut},
		stall: 10, stallFor: 2 * time.Second,
		sentLat: []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 * time.Second},
		sentLag: make([]time.Duration, 11),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &callClock{fakeClock: fakeClock{now: time.Unix(1000, 0)}}
			start := clock.now
			n := 0
			o := tc.o
			o.URL, o.Concurrency, o.Clock, o.Seed = "http://fake.invalid", 1, clock, 1
			if o.Mode == "" {
				o.Mode = ModeGet
			}
			o.Client = &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
				if n == tc.stall {
					clock.advance(tc.stallFor)
				}
				n++
				return reply(r, http.StatusOK, "ok"), nil
			})}
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			o, _ = o.withDefaults()

			// The figures, request by request.
			g := int64(o.Group)
			interval := 1e9 / o.Rate
			due := func(seq int64) time.Time { return start.Add(time.Duration(float64(seq-seq%g) * interval)) }
			cutoff := start.Add(o.Duration)
			lat, lag := newHist(), newHist()
			var notSent, beyond int64
			for _, l := range tc.sentLat {
				if l > time.Duration(histMax) {
					beyond++
				}
				_ = lat.RecordValue(clampHist(l))
			}
			for _, l := range tc.sentLag {
				_ = lag.RecordValue(clampHist(l))
			}
			for seq := int64(n); due(seq).Before(cutoff); seq++ {
				if due(seq).Before(start.Add(o.Warmup)) {
					continue
				}
				notSent++
				wait := cutoff.Sub(due(seq))
				if !o.Closed {
					if wait > time.Duration(histMax) {
						beyond++
					}
					_ = lat.RecordValue(clampHist(wait))
				}
				_ = lag.RecordValue(clampHist(wait))
			}
			requests := notSent + int64(len(tc.sentLag))
			reads, writes := requests, int64(0)
			if o.WriteRatio == 1 {
				reads, writes = 0, requests
			}
			if n != tc.stall+1 || rep.NotSent != notSent || rep.Errors != notSent || rep.ErrorKinds[kindNotSent] == nil ||
				rep.ErrorKinds[kindNotSent].Count != notSent || rep.Requests != requests || rep.Reads != reads || rep.Writes != writes ||
				rep.BeyondRange != beyond || rep.WarmupRequests != int64(n-len(tc.sentLag)) {
				t.Errorf("%d sent; report: %d requests (%d reads, %d writes, %d warm-up), %d not sent, %d errors %v, %d beyond range;\n"+
					"want %d sent, %d requests (%d reads, %d writes), %d not sent and as many errors, %d beyond range",
					n, rep.Requests, rep.Reads, rep.Writes, rep.WarmupRequests, rep.NotSent, rep.Errors, rep.ErrorKinds, rep.BeyondRange,
					tc.stall+1, requests, reads, writes, notSent, beyond)
			}
			if want := summarize(lat); rep.Latency != want {
				t.Errorf("latency %+v\nwant    %+v", rep.Latency, want)
			}
			if want := summarize(lag); rep.SendLag == nil || *rep.SendLag != want {
				t.Errorf("send lag %+v\nwant     %+v", rep.SendLag, want)
			}
			if calls := clock.calls.Load(); calls > int64(20*n+100) {
				t.Errorf("%d requests sent, %d not sent: the clock was read %d times (the backlog was counted request by request)",
					n, notSent, calls)
			}
		})
	}
}

// A backlog with no end in sight (at a rate so high that every request is
// due at the start) runs to the last job number; the scheduler then hands
// out no job (the next number would wrap round, and a later drain searched
// from a negative number for good), and the live line's interval counts
// none of the backlog.
func TestDrainToLastNumber(t *testing.T) {
	o, err := Options{URL: "http://fake.invalid", Mode: ModeGet, Rate: 1e300, Duration: time.Second, Seed: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1000, 0)
	s := newScheduler(&o, start)
	if _, ok := s.next(start); !ok {
		t.Fatal("no first job")
	}
	b := s.drain()
	if b.first != 1 || b.end != math.MaxInt64 {
		t.Fatalf("backlog [%d, %d), want [1, MaxInt64)", b.first, b.end)
	}
	if j, ok := s.next(start.Add(2 * time.Second)); ok {
		t.Fatalf("job %d handed out after the last number", j.seq)
	}
	if b := s.drain(); b.first != b.end {
		t.Fatalf("second backlog [%d, %d), want empty", b.first, b.end)
	}
	rec := newRecorder()
	rec.recordBacklog(b, true, start, 0.5)
	c := rec.counts
	if n := int64(math.MaxInt64 - 1); c.notSent != n || c.requests != n || c.errors != n || c.writes+c.reads != n ||
		c.intervalRequests != 0 || c.intervalErrors != 0 || rec.total.TotalCount() != n || rec.interval.TotalCount() != 0 {
		t.Errorf("counts %+v, latencies %d (interval %d); want %d not sent, none in the interval", c, rec.total.TotalCount(), rec.interval.TotalCount(), n)
	}
}
