package main

import (
	"encoding/json"
	"testing"
)

// A list flag's duplicates are dropped, as -capacity and -policy drop
// theirs: one row per (trace, capacity, policy), whichever list repeats
// itself. A trace given twice was replayed twice and printed twice (rows
// with the same key in the JSON and CSV output).
func TestSimDuplicateTraceOneRow(t *testing.T) {
	dir := traceDir(t)
	code, out, errOut := runSim(t, "-traces", dir, "-trace", "loop, loop", "-capacity", "2,2", "-policy", "lru,LRU", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(rows) != 1 {
		t.Errorf("%d rows, want 1 (trace loop, capacity 2, policy lru):\n%s", len(rows), out)
	}
}
