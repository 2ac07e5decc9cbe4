package load

import (
	"strings"
	"testing"
)

// An error kind without an example (a status: the status is all there is
// to say) is printed without an empty "(e.g. )".
func TestWriteTextNoEmptyExample(t *testing.T) {
	rep := &Report{Mode: ModeGet, URL: "http://x", Loop: "closed", Requests: 3, Reads: 3, Errors: 3,
		ErrorKinds: map[string]*ErrorCount{
			"status 404": {Count: 2},
			"timeout":    {Count: 1, Example: "i/o timeout"},
		}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "(e.g. )") || !strings.Contains(out, "(e.g. i/o timeout)") {
		t.Errorf("error kinds printed as:\n%s", out)
	}
}
