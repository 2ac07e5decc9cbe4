package load

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The read-your-writes check reads of the warm-up's writes are counted in
// the report (RYW.WarmupChecks): they were counted nowhere, so svcbench,
// which divides the processes' CPU by the requests the server handled,
// left them out. Writes due every 10 ms for 100 ms, the first 30 ms a
// warm-up: 3 checks in the warm-up, 7 after.
func TestRYWWarmupChecksCounted(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	ok := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		return reply(r, http.StatusNotFound, ""), nil // every check misses
	})}
	writes := &http.Client{Transport: funcTransport(func(r *http.Request) (*http.Response, error) {
		return reply(r, http.StatusNoContent, ""), nil
	})}
	rep, err := Run(context.Background(), Options{
		URL: "http://fake.invalid", Rate: 100, Duration: 100 * time.Millisecond, Warmup: 30 * time.Millisecond,
		Concurrency: 1, WriteRatio: 1, WriteMethod: WritePut, RYW: true, Seed: 1, Clock: clock, Client: writes, RYWClient: ok,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		WarmupRequests int64            `json:"warmup_requests"`
		RYW            map[string]int64 `json:"read_your_writes"`
	}
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatal(err)
	}
	if got.WarmupRequests != 3 || got.RYW["checks"] != 7 || got.RYW["missing"] != 7 || got.RYW["warmup_checks"] != 3 {
		t.Errorf("warm-up requests %d, read_your_writes %v; want 3 warm-up requests, 7 checks (7 missing) and 3 warmup_checks",
			got.WarmupRequests, got.RYW)
	}
}
