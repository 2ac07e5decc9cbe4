package load

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// The latency histogram resolved values below about 1 ms only to 512 ns
// steps (its unit was the power of two under histMin), not to the 3
// significant digits its comment promised: sub-millisecond latencies, a
// cache over loopback, were reported up to 2.4% off.
func TestSubMillisecondLatencyPrecision(t *testing.T) {
	for _, d := range []time.Duration{5 * time.Microsecond, 20 * time.Microsecond, 50 * time.Microsecond} {
		clock := &fakeClock{now: time.Unix(1000, 0)}
		rep, err := Run(context.Background(), Options{
			URL: "http://fake.invalid", Mode: ModeGet, Requests: 10, Concurrency: 1, Clock: clock, Seed: 1,
			Client: &http.Client{Transport: slowTransport{clock: clock, delay: d}},
		})
		if err != nil {
			t.Fatal(err)
		}
		// Every one of the 10 latencies is exactly d: with 3 significant
		// digits (HDR's bucket width is at most 1/1024 of the value) every
		// figure is within 0.1% of it.
		want := float64(d) / 1e6
		l := rep.Latency
		for _, f := range []struct {
			name string
			got  float64
		}{{"mean", l.Mean}, {"p50", l.P50}, {"p99", l.P99}, {"max", l.Max}} {
			if f.got < want*0.999 || f.got > want*1.001 {
				t.Errorf("10 latencies of exactly %v: %s %.6fms (%+.2f%%), want %.6fms within 0.1%%",
					d, f.name, f.got, 100*(f.got/want-1), want)
			}
		}
	}
}
