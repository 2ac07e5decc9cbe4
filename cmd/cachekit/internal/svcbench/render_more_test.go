package main

import (
	"testing"
)

// A result without phases (a -from-json file of a run that stopped early,
// or edited) renders: render indexed its last phase and panicked.
func TestRenderNoPhases(t *testing.T) {
	var md string
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("render panicked on a result without phases: %v", p)
			}
		}()
		md = render(&result{Cores: 2, Config: config{Entries: 1000, Concurrency: 8, ValueSize: 100, MaxBytes: "1GiB"}})
	}()
	mustContain(t, md, "No phase ran against the service.")
}

// A preload whose report measured no time has no rate: the division by
// zero printed -9,223,372,036,854,775,808 entries/s.
func TestRenderPreloadNoSeconds(t *testing.T) {
	p := testPhase(t, "preload", 0, 0, 1)
	p.report.Requests, p.report.Batch, p.report.Seconds = 10, 100, 0
	md := render(&result{Cores: 2, Config: config{Entries: 1000, Concurrency: 8, ValueSize: 100, MaxBytes: "1GiB"},
		Phases: []*phase{p, testPhase(t, "articles", 10000, 10000, 3.5)}})
	mustContain(t, md, "- 10 POSTs of 100 entries in 0.0 s (– entries/s), 0 errors")
}
