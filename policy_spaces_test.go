package cachekit

import "testing"

// Options.Policy documented that surrounding spaces are ignored, but a space
// between the policy name and its ":parameter" (or after the colon) made New
// reject a valid spec.
func TestPolicySpacesAroundNameAndParameter(t *testing.T) {
	for _, spec := range []string{"lrfu :0.5", "lrfu: 0.5", " lrfu : 0.5 "} {
		c, err := New(Options[int, int]{MaxEntries: 10, Policy: spec})
		if err != nil {
			t.Errorf("New with Policy %q: %v (want the same as \"lrfu:0.5\", which is accepted)", spec, err)
			continue
		}
		c.Close()
	}
}
