package load

import (
	"strings"
	"testing"
)

// The counts of the error kinds line up: the kind of the requests not sent
// ("not sent (generator behind)", 27 characters) overflowed the 22-character
// column, so its count stood further right than the others.
func TestWriteTextErrorColumn(t *testing.T) {
	rep := &Report{Mode: ModeGet, URL: "http://x", Loop: "open", TargetRate: 100, Requests: 30, Reads: 30, Errors: 30, NotSent: 10,
		ErrorKinds: map[string]*ErrorCount{
			"status 503": {Count: 10},
			"timeout":    {Count: 10, Example: "i/o timeout"},
			kindNotSent:  {Count: 10, Example: notSentText},
		}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	col := -1
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		i := strings.Index(line, " 10")
		if col == -1 {
			col = i
		} else if i != col {
			t.Errorf("the counts of the error kinds are not aligned (column %d, then %d):\n%s", col, i, b.String())
			break
		}
	}
}
