package main

import (
	"strings"
	"testing"
)

// --max-value-bytes 0 selects the server's default (1 MiB), which a small
// --max-bytes lowers: that must be reported as for an absent flag (or the
// zero refused), not done silently.
func TestServeZeroMaxValueBytesLoweredReported(t *testing.T) {
	checkLeaks(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "1MiB", "--max-value-bytes", "0", "--log-format", "json"}, nil)
	code := stop()
	if addr == "" && code == 2 {
		return // refused as a usage error: fine
	}
	if addr == "" {
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), "lowered") {
		t.Errorf("--max-value-bytes 0 with --max-bytes 1MiB: the limit in effect (512KiB) is not reported; logs:\n%s", logs.String())
	}
}
