package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A document whose writing fails (a full disk, a panic of the renderer
// caught higher up) must leave the previous one as it was, as the other
// commands' documents do (report.WriteFile): writeTo truncated it first.
func TestWriteToFailureKeepsThePreviousDocument(t *testing.T) {
	name := filepath.Join(t.TempDir(), "hit-ratio.md")
	old := "# the previous run's document\n"
	if err := os.WriteFile(name, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("disk full")
	err := writeTo(name, io.Discard, func(w io.Writer) error {
		io.WriteString(w, "# half a docu")
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("writeTo = %v, want the write's error", err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != old {
		t.Errorf("after a failed write the document holds %q, want the previous %q", got, old)
	}
	entries, _ := os.ReadDir(filepath.Dir(name))
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the document alone", len(entries))
	}
}
