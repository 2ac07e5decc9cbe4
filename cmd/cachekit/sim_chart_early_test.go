package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A -chart file that cannot be written (its directory is missing, or a
// directory has its name) is refused before the replay, which may take
// minutes on a real trace: the replay ran and printed its table, and only
// then did the chart fail, with exit 1.
func TestSimChartPathCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(trace, []byte("1\n2\n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, chart := range []string{
		filepath.Join(dir, "missing", "c.svg"),
		filepath.Join(dir, "d.svg"),
	} {
		code, out, errOut := runSim(t, "-trace", trace, "-capacity", "2", "-policy", "lru", "-chart", chart)
		if code != 2 || out != "" || !strings.Contains(errOut, "-chart") || !strings.Contains(errOut, chart) {
			t.Errorf("-chart %s: exit %d, stdout %q, stderr %q; want exit 2 before any replay, naming -chart and the file", chart, code, out, errOut)
		}
	}
}
