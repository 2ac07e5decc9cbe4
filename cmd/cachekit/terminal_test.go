package main

import (
	"os"
	"path/filepath"
	"testing"
)

// The live line is for a terminal: stderr sent to /dev/null (a character
// device, as a terminal is) must not count as one. `cachekit load
// 2>/dev/null` turned the live line on.
func TestLoadIsTerminalDevNull(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true, want false", os.DevNull)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("isTerminal(a regular file) = true, want false")
	}
}
