package load

import (
	"context"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An infinite Zipf exponent passes a "> 1" check, and math/rand's Zipf then
// loops forever inside the scheduler, under its lock: the run would never
// end, not even when ctx is done. It must be refused.
func TestZipfInfinityRejected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Options{URL: "http://127.0.0.1:1", Mode: ModeGet, Zipf: math.Inf(1), Requests: 1, Concurrency: 1})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Zipf +Inf accepted")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run with Zipf +Inf still running 10s after start (ctx cancelled after 200ms): the scheduler loops forever")
	}
}

// A warm-up as long as the run leaves nothing to measure: it is refused
// rather than yielding an empty report.
func TestWarmupCoveringDurationRejected(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	for _, o := range []Options{
		{Duration: 10 * time.Millisecond, Warmup: 20 * time.Millisecond},
		{Duration: 10 * time.Millisecond, Warmup: 10 * time.Millisecond},
		{Warmup: 10 * time.Second}, // the default duration, 10s
	} {
		o.URL, o.Mode, o.Rate, o.Concurrency, o.Clock = "http://fake.invalid", ModeGet, 1000, 1, clock
		o.Client = &http.Client{Transport: slowTransport{clock: clock, delay: time.Millisecond}}
		if rep, err := Run(context.Background(), o); err == nil {
			t.Errorf("warm-up %v, duration %v accepted: %d requests measured, %d in the warm-up, %.3fs",
				o.Warmup, o.Duration, rep.Requests, rep.WarmupRequests, rep.Seconds)
		}
	}
}

// Sizes that the run would have to hold in memory (a body of each worker,
// a goroutine and a connection per worker) are bounded: beyond the bounds,
// Run refuses them with an error instead of running out of memory or
// panicking in make.
func TestSizesBounded(t *testing.T) {
	for _, o := range []Options{
		{ValueSize: 1 << 62},
		{ValueSize: MaxValueSize + 1},
		{Concurrency: 1 << 40},
		{Concurrency: MaxConcurrency + 1},
		{Batch: 1 << 20, ValueSize: 1 << 10, Cardinality: 1 << 30}, // 1 GiB per POST
	} {
		o.URL, o.Mode, o.WriteRatio, o.Requests = "http://127.0.0.1:1", ModeAPI, 1, 1
		if _, err := Run(context.Background(), o); err == nil {
			t.Errorf("concurrency %d, batch %d, value size %d accepted", o.Concurrency, o.Batch, o.ValueSize)
		}
	}
	// The bounds themselves are accepted.
	o := Options{URL: "http://127.0.0.1:1", Mode: ModeAPI, Concurrency: MaxConcurrency, ValueSize: MaxValueSize, Batch: MaxBody/MaxValueSize - 1}
	if _, err := o.withDefaults(); err != nil {
		t.Errorf("bounds refused: %v", err)
	}
}

// The bound on a request's body counts what each entry of a POST carries
// besides its value (its key, the JSON around them): with small values a
// batch must not build a body many times MaxBody.
func TestBatchBodyBounded(t *testing.T) {
	for _, prefix := range []string{"", strings.Repeat("p", MaxKeyPrefix)} {
		o := Options{URL: "http://127.0.0.1:1", Mode: ModeAPI, WriteRatio: 1, Requests: 1,
			ValueSize: 1, Batch: MaxBody, Cardinality: MaxBody, KeyPrefix: prefix}
		d, err := o.withDefaults()
		if err != nil {
			continue // refused: fine
		}
		r := &runner{o: d}
		max := uint64(d.Cardinality - 1)
		one := len(`{"id":"`) + len(r.appendKey(nil, max)) + len(`","entry":`) + len(r.appendValue(nil, max)) + len(`},`)
		if body := int64(one) * int64(d.Batch); body > MaxBody {
			t.Fatalf("accepted a batch of %d entries of value size %d: each POST body is up to %d bytes (%d per entry), more than MaxBody (%d)",
				d.Batch, d.ValueSize, body, one, MaxBody)
		}
	}
	o := Options{URL: "http://127.0.0.1:1", Mode: ModeAPI, KeyPrefix: strings.Repeat("p", MaxKeyPrefix+1)}
	if _, err := o.withDefaults(); err == nil {
		t.Errorf("a key prefix of %d bytes accepted", MaxKeyPrefix+1)
	}
}
