package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFromJSONWithoutResults: -from-json of a file naming caches and
// goroutine counts but without "results" (cut short, edited by hand)
// panicked on a nil *Results; it must be a clear error.
func TestFromJSONWithoutResults(t *testing.T) {
	for _, body := range []string{
		`{"probe_goroutines": [1], "caches": ["cachekit"], "configs": ["c"]}`,
		`{"replay_caches": ["cachekit"], "replay_goroutines": 8}`,
	} {
		dir := t.TempDir()
		js := filepath.Join(dir, "visibility.json")
		if err := os.WriteFile(js, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("run -from-json of %s panicked: %v", body, p)
				}
			}()
			err := run([]string{"-from-json", js, "-md", filepath.Join(dir, "visibility.md")}, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "no results") {
				t.Errorf("run -from-json of %s: %v, want an error saying there are no results", body, err)
			}
		}()
	}
}
