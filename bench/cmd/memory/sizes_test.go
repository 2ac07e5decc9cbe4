package main

import (
	"io"
	"strings"
	"testing"
)

// TestSizesErrorSaysWhy: -sizes 1000,1000 is refused for the repeat,
// and the error says so; it said only `bad size "1000"`, of a size that
// is fine on its own.
func TestSizesErrorSaysWhy(t *testing.T) {
	for _, c := range []struct{ sizes, why string }{{"1000,1000", "given twice"}, {"0", "not positive"}, {"1k", "invalid syntax"}} {
		err := run([]string{"-sizes", c.sizes}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("run -sizes %s = %v, want an error saying %q", c.sizes, err, c.why)
		}
	}
}
