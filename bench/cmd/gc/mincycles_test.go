package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestNegativeMinCycles: -min-cycles -1 is refused before anything is
// measured (a negative count made every churn window last -max-window).
func TestNegativeMinCycles(t *testing.T) {
	if _, child := os.LookupEnv("CACHEKIT_BENCH_JOB"); child {
		t.Skip("started as a measuring child") // the old code measured, starting this binary again
	}
	err := run([]string{"-min-cycles", "-1", "-caches", "map", "-sizes", "0", "-min-window", "1ms", "-max-window", "1ms"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-min-cycles") {
		t.Errorf("run with -min-cycles -1: %v; want an error about -min-cycles", err)
	}
}
