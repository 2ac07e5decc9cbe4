package hitratio

import (
	"strings"
	"testing"
)

// The synthetic report opened each family's section with the sentence
// written for the real traces ("A recommendation service, a network file
// system and an e-commerce site." for synthetic-shift; CDN requests for the
// zipf ones). Generated families now get their own.
func TestSyntheticFamilyIntros(t *testing.T) {
	rs := &Results{Runs: 1}
	for _, spec := range SyntheticSuite() {
		rs.Traces = append(rs.Traces, TraceInfo{TraceSpec: spec, Requests: 1000, Unique: 100})
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, Report{Meta: Meta{Synthetic: true}, Results: rs}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, claim := range []string{
		"A recommendation service, a network file system and an e-commerce site.",
		"CDN requests mostly for objects requested once",
	} {
		if strings.Contains(md, claim) {
			t.Errorf("the synthetic report describes its generated traces as %q", claim)
		}
	}
}
