package main

import (
	"io"
	"strings"
	"testing"
)

// TestGoroutinesErrorSaysWhy: -goroutines 4,4 is refused for the
// repeat, and the error says so; it said only `bad count "4"`, of a count
// that is fine on its own.
func TestGoroutinesErrorSaysWhy(t *testing.T) {
	err := run([]string{"-goroutines", "4,4", "-traces-dir", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("run -goroutines 4,4 = %v, want an error saying 4 is given twice", err)
	}
}
