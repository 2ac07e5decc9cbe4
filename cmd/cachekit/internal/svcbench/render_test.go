package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func testPhase(t *testing.T, name string, rate, throughput, p999 float64) *phase {
	t.Helper()
	rep, _ := json.Marshal(map[string]any{
		"target_rate": rate, "seconds": 10.0, "requests": int64(throughput * 10), "throughput": throughput,
		"warmup_requests": 0, "latency": map[string]float64{"mean_ms": 0.2, "p99_9_ms": p999, "p99_999_ms": p999 * 2},
	})
	stats, _ := json.Marshal(map[string]any{"store": map[string]int64{"entries": 5}})
	p := &phase{Name: name, Report: rep, Stats: stats, ServerCPU: throughput * 10 * 50e-6, ClientCPU: throughput * 10 * 30e-6,
		LoadBefore: "0.10, 0.20, 0.30", LoadAfter: "1.00, 0.50, 0.40"}
	if err := p.decode(); err != nil {
		t.Fatal(err)
	}
	return p
}

// The verdicts and the derived figures follow the reports.
func TestRender(t *testing.T) {
	res := &result{Cores: 2, Config: config{Entries: 1000, Concurrency: 8, ValueSize: 100, MaxBytes: "1GiB"}, Phases: []*phase{
		testPhase(t, "articles", 10000, 10000, 3.5),
		testPhase(t, "sweep-20000", 20000, 19990, 8),
		testPhase(t, "sweep-30000", 30000, 25000, 40),
	}}
	md := render(res)
	mustContain(t, md,
		"p99.9 3.500 ms (10 ms) **met**",
		"Our target, p99.9 under 2 ms at 10 000 requests/s: 3.500 ms, **not met**",
		"under 10 ms (with no error): 19,990 requests/s; target 50 000, **not met**",
		"80 µs (articles)",
		"can serve about 25,000 requests/s",
		"| sweep-30000 | 30000 | 25000 | 250000 |",
	)
	if !strings.Contains(md, "| 0.10, 0.20, 0.30 → 1.00, 0.50, 0.40 |") {
		t.Error("the load averages are not reported")
	}
}

// The floor phases get their own table and verdict line, and their
// requests do not count among the service's.
func TestRenderFloor(t *testing.T) {
	floorErr := testPhase(t, "floor-30000", 30000, 20000, 900)
	floorErr.report.Errors = 7
	res := &result{Cores: 2, Config: config{Entries: 1000, Concurrency: 8, ValueSize: 100, MaxBytes: "1GiB", Floor: true}, Phases: []*phase{
		testPhase(t, "floor-10000", 10000, 10000, 2.5),
		testPhase(t, "floor-20000", 20000, 19990, 9),
		floorErr,
		testPhase(t, "articles", 10000, 10000, 3.5),
	}, Hiccups: &hiccups{Seconds: 20, LostMs: 560.4, Over: []int{1608, 99, 53, 6, 2}, MaxMs: 10.78}}
	md := render(res)
	mustContain(t, md,
		"### The machine's floor",
		"lost 560 ms in gaps between two readings: 1608 gaps over 100 µs, 99 over 1 ms, 53 over 2 ms,",
		"6 over 5 ms, 2 over 10 ms; the longest 10.8 ms.",
		"stalls a thread for over 2 ms 2.6 times a second",
		"| floor-20000 | 20000 | 19990 |",
		"- The floor (a server that does nothing, same load): p99.9 2.500 ms at 10 000 requests/s, against the 2 ms target; the highest rate run whose p99.9 stayed under 10 ms: 19,990 requests/s",
		"Failed requests over all phases: 0;",
	)
}

// mustContain reports each of wants that md lacks.
func mustContain(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 10000000: "10,000,000", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// The requests never sent are told apart from the server's failures.
func TestRenderNotSent(t *testing.T) {
	behind := testPhase(t, "sweep-20000", 20000, 19990, 8)
	behind.report.Errors, behind.report.NotSent = 5, 4
	res := &result{Cores: 2, Config: config{Entries: 1000, Concurrency: 8, ValueSize: 100, MaxBytes: "1GiB"}, Phases: []*phase{
		testPhase(t, "articles", 10000, 10000, 3.5),
		behind,
	}}
	mustContain(t, render(res),
		"Failed requests over all phases: 5 (4 of them due but never sent: every connection of the generator was busy); handler panics: 0;")
}
