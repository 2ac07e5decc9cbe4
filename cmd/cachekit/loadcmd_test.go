package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// An explicit 0 (or an empty --key-prefix) given on the command line is
// refused as a usage error instead of silently selecting the default:
// --concurrency 0 must not run 16 workers.
func TestLoadRefusesZeroFlags(t *testing.T) {
	for _, flag := range []string{"--value-size", "--concurrency", "--timeout", "--cardinality", "--group", "--batch", "--key-prefix"} {
		value := "0"
		if flag == "--key-prefix" {
			value = ""
		}
		var out, errOut bytes.Buffer
		// Nothing listens on port 1: the run (if started) ends at once with errors.
		code := loadContext(context.Background(), []string{"--url", "http://127.0.0.1:1", "--requests", "1",
			"--write-ratio", "1", flag, value, "--json", "-"}, &out, &errOut, false)
		if code != 2 || !strings.Contains(errOut.String(), flag) {
			t.Errorf("%s %q: exit %d, want 2 (a usage error) and a message naming the flag; stderr %q; report:\n%s",
				flag, value, code, errOut.String(), out.String())
		}
	}
}
