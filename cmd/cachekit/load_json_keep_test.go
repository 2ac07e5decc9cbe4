package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The --json report replaces its file only when there is a report: a run
// that fails before it has one (an option load.Run refuses, a --cpuprofile
// that cannot be created) leaves an earlier report as it was, instead of
// truncating it at the start and removing it at the failure.
func TestLoadJSONFailedRunKeepsEarlierReport(t *testing.T) {
	checkLeaks(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--rate", "-1"},
		{"--cpuprofile", filepath.Join(dir, "no-such-dir", "cpu.out")},
	} {
		report := filepath.Join(dir, "report.json")
		if err := os.WriteFile(report, []byte(`{"earlier": true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		args = append(args, "--mode", "get", "--requests", "1", "--json", report, "http://127.0.0.1:1/")
		if code := loadContext(context.Background(), args, &out, &errOut, false); code == 0 {
			t.Fatalf("%q: exit 0, want a failure", args)
		}
		if b, err := os.ReadFile(report); err != nil || string(b) != `{"earlier": true}` {
			t.Errorf("%q: the earlier report is now %q (%v)", args, b, err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, ".report.json*")); len(m) > 0 {
			t.Errorf("%q: temporary files left: %q", args, m)
		}
	}
}
