package load

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// Latencies above the histogram's range (1 hour) are counted in
// BeyondRange and recorded as 1 hour, including those that would fit in the
// histogram's last bucket (up to about 73 minutes): here 65 minutes.
func TestLatencyBeyondRange(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Mode: ModeGet, Requests: 1, Concurrency: 1, Clock: clock,
		Client: &http.Client{Transport: slowTransport{clock: clock, delay: 65 * time.Minute}},
	})
	if err != nil {
		t.Fatal(err)
	}
	hour := float64(time.Hour.Milliseconds())
	if rep.BeyondRange != 1 || rep.Latency.Max > hour*1.001 || rep.Latency.Max < hour*0.999 {
		t.Errorf("a 65-minute latency: beyond_range %d, max %.1f min; want 1 and 60 min", rep.BeyondRange, rep.Latency.Max/60000)
	}
}
