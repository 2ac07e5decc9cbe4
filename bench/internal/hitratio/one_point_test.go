package hitratio

import (
	"strings"
	"testing"
)

// The commentary said "at 1 of 1 points", "over these 1 points", "The 1
// points where ... are" and, with only one of the default and the Cache replayed, "default are"
// (count, its helper, returned the number as it was); one point and one
// cache are now singular.
func TestOnePointIsSingular(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "t", Family: FamilySkew, About: "t", Capacities: []int{10}}, Requests: 10000, Unique: 500},
	}
	behindOne := pointResults(t, 1, traces, map[string][]float64{NameDefault: {40}, "lru": {30}, "lfu": {35}, "otter": {50}},
		[]string{NameDefault, "lru", "lfu", "otter"})
	md := markdownOf(t, behindOne)
	for _, want := range []string{
		"The 1 point where default is more than 0.1 point below the best peer (a gap in bold is",
		"default is at least the best peer minus 0.1 at 0 of 1 point (",
		"LFU beats LRU at 1 of 1 point (",
		"- **Means**: at this point, default 40.00,",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
	within := pointResults(t, 1, traces, map[string][]float64{NameDefault: {50}, "otter": {50}}, []string{NameDefault, "otter"})
	if md := markdownOf(t, within); !strings.Contains(md, "At every point, default is at least the best peer minus 0.1 point.") {
		t.Errorf("the report does not say the default alone is within 0.1 at every point:\n%s", md)
	}
}
