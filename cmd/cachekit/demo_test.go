package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	checkLeaks(t)
	var out, errOut bytes.Buffer
	if code := demo([]string{"-capacity", "100", "-keys", "1000", "-requests", "20000", "-seed", "3"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "20000 reads of 1000 Zipf(1.01) keys through a cache of 100 entries") ||
		!strings.Contains(out.String(), "hit ratio") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-help"}, 0},
		{[]string{"-requests", "10", "extra"}, 2},
		{[]string{"-capacity", "0"}, 2},
		{[]string{"-keys", "1"}, 2},
		{[]string{"-colour"}, 2},
	} {
		errOut.Reset()
		if code := demo(tc.args, &out, &errOut); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errOut.String())
		}
	}
}
