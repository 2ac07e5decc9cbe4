package load

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// Report.WarmupRequests counts the requests sent during the warm-up: a
// paced run cancelled in its warm-up, with requests due and not sent, does
// not count those as warm-up requests (svcbench takes them for requests
// the server handled). One worker, a server that takes 5 ms, requests due
// every 1 ms, a warm-up of an hour, cancelled when the 10th request
// completes (at 50 ms): 10 requests were sent, 40 more were due.
func TestWarmupRequestsNotSentLeftOut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &fakeClock{now: time.Unix(1000, 0)}
	n := 0
	rep, err := Run(ctx, Options{
		URL: "http://fake.invalid", Mode: ModeGet, Rate: 1000, Duration: 2 * time.Hour, Warmup: time.Hour,
		Concurrency: 1, Clock: clock,
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
	if n != 10 || rep.WarmupRequests != 10 || rep.Requests != 0 || rep.NotSent != 0 || rep.Errors != 0 {
		t.Errorf("%d sent; report: %d warm-up requests, %d requests, %d not sent, %d errors; want 10 sent, 10 warm-up requests and nothing else",
			n, rep.WarmupRequests, rep.Requests, rep.NotSent, rep.Errors)
	}
}
