package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTraces writes tiny gzipped traces under the names of two traces of
// the suite, so that the command replays them at the suite's capacities.
func writeTraces(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i, name := range []string{"lirs-cs", "lirs-ps"} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		for j := range 4000 {
			// A loop over 700 keys, interleaved with a few hot keys.
			k := j % 700
			if j%4 == 0 {
				k = 10000 + j%7
			}
			fmt.Fprintln(zw, k+i)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".txt.gz"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCommand(t *testing.T) {
	traces := writeTraces(t)
	out := t.TempDir()
	md := filepath.Join(out, "docs", "hit-ratio.md")
	js := filepath.Join(out, "hit-ratio.json")
	charts := filepath.Join(out, "docs", "charts")
	text := runReport(t, []string{"-traces", traces, "-md", md, "-json", js, "-chart-dir", charts, "-runs", "2", "-only", "lirs-cs,lirs-ps", "-q"}, md,
		"#### lirs-cs", "#### lirs-ps", "](charts/hit-ratio-lirs-cs.png)", "go run ./bench/cmd/hitratio -traces "+traces, "## Summary")
	for _, name := range []string{"hit-ratio-lirs-cs.png", "hit-ratio-lirs-ps.png"} {
		if fi, err := os.Stat(filepath.Join(charts, name)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", name, err)
		}
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs    int               `json:"runs"`
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Runs != 2 || len(got.Results) == 0 {
		t.Errorf("JSON: %d runs, %d results", got.Runs, len(got.Results))
	}

	// Drawn again from the JSON, the report is the same.
	md2 := filepath.Join(out, "docs", "again.md")
	again := runReport(t, []string{"-from-json", js, "-md", md2, "-chart-dir", charts, "-q"}, md2)
	if !bytes.Equal(text, again) {
		t.Errorf("the report drawn from the JSON differs:\n--- first\n%s\n--- again\n%s", text, again)
	}
}

func TestCommandStdout(t *testing.T) {
	traces := writeTraces(t)
	var stdout, stderr bytes.Buffer
	args := []string{"-traces", traces, "-md", "-", "-chart-dir", "", "-only", "lirs-cs", "-caches", "default,lru,otter,opt-bypass", "-runs", "1", "-q"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	s := stdout.String()
	if !strings.HasPrefix(s, "# Hit ratios") || !strings.Contains(s, "| 1,000 |") || strings.Contains(s, "![") {
		t.Errorf("unexpected report:\n%s", s)
	}
}

func TestCommandErrors(t *testing.T) {
	traces := writeTraces(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-runs", "0"}, 2, "-runs"},
		{[]string{"-chart-format", "gif"}, 2, "chart-format"},
		{[]string{"extra"}, 2, "unexpected"},
		{[]string{"-traces", traces, "-only", "nope", "-md", ""}, 1, "unknown trace"},
		{[]string{"-traces", traces, "-caches", "nope", "-only", "lirs-cs", "-md", ""}, 1, "unknown cache"},
		{[]string{"-traces", traces, "-only", "arc-oltp", "-md", "", "-q"}, 1, "arc-oltp"},
		{[]string{"-from-json", filepath.Join(traces, "absent.json"), "-md", ""}, 1, "absent.json"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-h"}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "-only") {
		t.Errorf("-h: exit %d, %q", code, stderr.String())
	}
}

func TestCommandLine(t *testing.T) {
	got := command([]string{"-only", "arc-oltp,lirs-cs", "-json", "x.json", "-q", "-md", "a b.md", "--json=y.json", "-chart-dir", "it's"})
	want := `go run ./bench/cmd/hitratio -only arc-oltp,lirs-cs -md 'a b.md' -chart-dir 'it'\''s'`
	if got != want {
		t.Errorf("command = %s, want %s", got, want)
	}
}

// TestCommandSynthetic replays one synthetic trace (generated, no files)
// through two caches and checks that the report says it is the synthetic
// suite and keeps that through a JSON round trip.
func TestCommandSynthetic(t *testing.T) {
	out := t.TempDir()
	md, js := filepath.Join(out, "s.md"), filepath.Join(out, "s.json")
	text := runReport(t, []string{"-synthetic", "-traces", "/nonexistent", "-md", md, "-json", js, "-chart-dir", "", "-runs", "1", "-only", "synthetic-loop", "-caches", "default,lru", "-q"}, md,
		"on synthetic traces (out of sample)", "#### synthetic-loop", "generated in the process", "-synthetic")
	if bytes.Contains(text, []byte("README.md`'s suite table")) {
		t.Error("the synthetic report describes the traces README's suite")
	}
	again := filepath.Join(out, "again.md")
	runReport(t, []string{"-from-json", js, "-md", again, "-chart-dir", ""}, again, "out of sample")
}

// runReport runs the command with args, which must succeed, and returns
// the Markdown report it wrote to md, reporting each of want it lacks.
func runReport(t *testing.T, args []string, md string, want ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !bytes.Contains(text, []byte(w)) {
			t.Errorf("the report %s lacks %q", md, w)
		}
	}
	return text
}

// A synthetic run without -md writes its own document, not the trace
// suite's.
func TestSyntheticDefaultDocument(t *testing.T) {
	for _, tc := range []struct {
		args []string
		md   string
	}{
		{nil, "docs/benchmarks/hit-ratio.md"},
		{[]string{"-synthetic"}, "docs/benchmarks/hit-ratio-synthetic.md"},
		{[]string{"-synthetic", "-md", "x.md"}, "x.md"},
		{[]string{"-synthetic", "-md", ""}, ""},
	} {
		f, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if f.md != tc.md {
			t.Errorf("%q: -md %q, want %q", tc.args, f.md, tc.md)
		}
	}
}
