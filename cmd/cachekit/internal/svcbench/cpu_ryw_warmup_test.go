package main

import (
	"encoding/json"
	"math"
	"testing"
)

// The CPU per request of the read-your-writes phase counts the check reads
// of the warm-up's writes among the requests the server handled: the
// report counts them in read_your_writes.warmup_checks.
func TestCPUPerRequestCountsWarmupChecks(t *testing.T) {
	rep, _ := json.Marshal(map[string]any{
		"target_rate": 5000.0, "seconds": 10.0, "requests": 50_000, "warmup_requests": 25_000,
		"read_your_writes": map[string]int64{"checks": 50_000, "warmup_checks": 25_000},
	})
	stats, _ := json.Marshal(map[string]any{"store": map[string]int64{"entries": 5}})
	// 50,000 writes + 25,000 warm-up writes + 75,000 check reads = 150,000 handled.
	p := &phase{Name: "ryw", Report: rep, Stats: stats, ServerCPU: 7.5, ClientCPU: 3}
	if err := p.decode(); err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.serverUsPerR-50) > 1e-9 || math.Abs(p.clientUsPerR-20) > 1e-9 {
		t.Errorf("CPU per request: server %.3f µs, generator %.3f µs; want 50 and 20 (150,000 requests handled)", p.serverUsPerR, p.clientUsPerR)
	}
}
