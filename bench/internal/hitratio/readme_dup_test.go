package hitratio

import (
	"strings"
	"testing"
)

// ReadmeSuite kept the last row of a trace listed twice in the traces
// README, so the check of the replayed capacities against the README missed
// the other row. A trace listed twice is now an error.
func TestReadmeDuplicateTrace(t *testing.T) {
	suite := Suite()[:1] // arc-oltp at 250 / 500 / 1000 / 2000 / 5000 / 10000
	readme := "| trace | capacities |\n|---|---|\n" +
		"| arc-oltp | 250 / 500 |\n" +
		"| arc-oltp | 250 / 500 / 1000 / 2000 / 5000 / 10000 |\n"
	diffs, err := CheckReadme(suite, strings.NewReader(readme))
	if err == nil && len(diffs) == 0 {
		t.Errorf("a README listing arc-oltp twice, once at 250 / 500, passes the check without a difference")
	}
}
