package load

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// A paced run's due times used to be truncated to the nanosecond: seq
// intervals of 1e9/29 ns came to 999.999999 ms, so --rate 29 --duration 1s
// scheduled a 30th request 1 ns before the end, which a timer waking a few
// microseconds late reported as "not sent (generator behind)" (and an
// exact one sent: 30 requests for a rate of 29). Due times are now rounded.
func TestDueTimesRoundedNotTruncated(t *testing.T) {
	for _, rate := range []float64{29, 58, 77} {
		clock := &fakeClock{now: time.Unix(1000, 0), late: time.Microsecond}
		rep, err := Run(context.Background(), Options{
			URL: "http://fake.invalid", Mode: ModeGet, Rate: rate, Duration: time.Second, Concurrency: 1,
			Seed: 1, Clock: clock,
			Client: &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
				return reply(r, 200, "ok"), nil
			})},
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Requests != int64(rate) || rep.Errors != 0 {
			t.Errorf("--rate %v --duration 1s against an instant server: %d requests, %d errors %v (not sent %d); want %v requests, no error",
				rate, rep.Requests, rep.Errors, rep.ErrorKinds, rep.NotSent, rate)
		}
	}
}
