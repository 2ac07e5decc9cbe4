package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Flags given after the URL are not parsed (the flag package stops at the
// first argument): the error names the first of them and says that flags
// come first. It named the URL itself as the unexpected argument.
func TestLoadFlagsAfterURL(t *testing.T) {
	var out, errOut bytes.Buffer
	code := loadContext(context.Background(), []string{"http://127.0.0.1:1", "--rate", "5"}, &out, &errOut, false)
	msg := errOut.String()
	if code != 2 || !strings.Contains(msg, `"--rate"`) || strings.Contains(msg, `"http://127.0.0.1:1"`) ||
		!strings.Contains(msg, "flags come before the URL") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming \"--rate\" and saying flags come before the URL", code, msg)
	}
}
