package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFromSyntheticJSONKeepsTheTraceReport: drawing the synthetic suite's
// report again from its JSON, without -md, must not write it over the
// real traces' report (docs/benchmarks/hit-ratio.md): the JSON says the
// run was synthetic, so the default document is hit-ratio-synthetic.md,
// as for a -synthetic run.
func TestFromSyntheticJSONKeepsTheTraceReport(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	js := filepath.Join(dir, "syn.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-synthetic", "-only", "synthetic-loop", "-caches", "lru", "-md", "", "-chart-dir", "", "-json", js, "-q"}, &stdout, &stderr); code != 0 {
		t.Fatalf("synthetic run: exit %d: %s", code, stderr.String())
	}
	real := filepath.Join("docs", "benchmarks", "hit-ratio.md")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("# Hit ratios: cachekit and its peers on real traces\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"-from-json", js, "-chart-dir", "", "-q"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-from-json: exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "synthetic") {
		t.Errorf("the real traces' report was overwritten by the synthetic one:\n%.300s", b)
	}
	if _, err := os.Stat(filepath.Join("docs", "benchmarks", "hit-ratio-synthetic.md")); err != nil {
		t.Errorf("the synthetic report was not written to its own document: %v", err)
	}
}
