package main

import (
	"encoding/json"
	"testing"
)

// The files of a FILE+FILE trace are trimmed of spaces, as the traces of
// the comma-separated list are: "loop + plain.txt" is the trace
// "loop+plain.txt". Its parts were looked up with their spaces, and not
// found.
func TestSimTracePartsTrimmed(t *testing.T) {
	dir := traceDir(t)
	code, out, errOut := runSim(t, "-traces", dir, "-trace", "loop+plain.txt, loop + plain.txt ,loop +plain.txt",
		"-capacity", "2", "-policy", "lru", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(rows) != 1 || rows[0].Trace != "loop+plain.txt" {
		t.Fatalf("rows %+v, want one of trace loop+plain.txt", rows)
	}
	if rows[0].Requests == 0 {
		t.Errorf("no requests replayed: %+v", rows[0])
	}
}
