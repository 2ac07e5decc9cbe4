package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/throughput"
)

// TestDuplicateMults: like -caches and -workloads, -mults refuses a value
// given twice; accepted, -mults 1,1 corrupted the report (one result with
// no figures and a median of 0, the other with two per round).
func TestDuplicateMults(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "t.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"-duration", "5ms", "-rounds", "1", "-caches", "xsync", "-workloads", "getput",
		"-reads", "100", "-mults", "1,1", "-json", jsonFile}, &stdout, &stderr)
	if err != nil {
		return // refused: fine
	}
	var rep throughput.Report
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if len(r.OpsPerSec) != rep.Rounds {
			t.Errorf("-rounds 1, but a result of %s has %d figures: %v", r.Cache, len(r.OpsPerSec), r.OpsPerSec)
		}
	}
}

// TestNoteFromJSON: -note ("a note for the document's header") applies to
// a document drawn again with -from-json too.
func TestNoteFromJSON(t *testing.T) {
	dir := t.TempDir()
	jsonFile := filepath.Join(dir, "t.json")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-duration", "5ms", "-rounds", "1", "-caches", "xsync", "-workloads", "getput",
		"-reads", "100", "-mults", "1", "-json", jsonFile}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	mdFile := filepath.Join(dir, "t.md")
	if err := run([]string{"-from-json", jsonFile, "-note", "redrawn with a note", "-md", mdFile}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(mdFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("redrawn with a note")) {
		t.Errorf("-note given with -from-json is not in the document")
	}
}
