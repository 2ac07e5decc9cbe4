package main

import (
	"encoding/json"
	"math"
	"testing"
)

// The CPU per request divides the processes' CPU time by the requests they
// handled: a paced run's requests that were due but never sent (NotSent,
// counted in Requests) cost neither process anything and must not dilute
// it.
func TestCPUPerRequestLeavesOutTheRequestsNotSent(t *testing.T) {
	rep, _ := json.Marshal(map[string]any{
		"target_rate": 10000.0, "seconds": 10.0, "requests": 100_000, "not_sent": 20_000, "warmup_requests": 10_000,
		"read_your_writes": map[string]int64{"checks": 10_000},
	})
	stats, _ := json.Marshal(map[string]any{"store": map[string]int64{"entries": 5}})
	// 80,000 sent + 10,000 warm-up + 10,000 check reads = 100,000 handled.
	p := &phase{Name: "sweep-10000", Report: rep, Stats: stats, ServerCPU: 5, ClientCPU: 3}
	if err := p.decode(); err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.serverUsPerR-50) > 1e-9 || math.Abs(p.clientUsPerR-30) > 1e-9 {
		t.Errorf("CPU per request: server %.3f µs, generator %.3f µs; want 50 and 30", p.serverUsPerR, p.clientUsPerR)
	}
}
