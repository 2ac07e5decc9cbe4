package hitratio

import (
	"strings"
	"testing"
)

// Two family bullets were labelled with a fixed conclusion ("Where LFU
// beats LRU", "Where recency wins") that stayed when the computed
// comparison under it said the opposite; their labels now name what they
// compare, not who wins.
func TestFamilyLabelsFollowTheNumbers(t *testing.T) {
	traces := []TraceInfo{
		{TraceSpec: TraceSpec{Name: "x-rec", Family: FamilyRecency, About: "rec", Capacities: []int{10, 100}}, Requests: 10000, Unique: 500},
		{TraceSpec: TraceSpec{Name: "x-skew", Family: FamilySkew, About: "skew", Capacities: []int{10, 100}}, Requests: 10000, Unique: 500},
	}
	// LRU ahead of LFU everywhere; otter ahead of golang-lru everywhere.
	ratios := map[string][]float64{
		NameDefault:  {40, 50, 40, 50},
		"lru":        {45, 55, 45, 55},
		"lfu":        {30, 40, 30, 40},
		"otter":      {45, 55, 45, 55},
		"golang-lru": {35, 45, 35, 45},
	}
	md := markdownOf(t, pointResults(t, 1, traces, ratios, []string{NameDefault, "lru", "lfu", "otter", "golang-lru"}))
	// The bullets are found by their comparisons, whatever their labels,
	// so that a relabelled bullet is still checked.
	for _, c := range []struct {
		comparison string // how the bullet's text starts
		claims     []string
	}{
		{"LFU beats LRU at none", []string{"LFU beats", "LFU wins"}},
		{"golang-lru's LRU beats otter at none", []string{"recency wins", "LRU/2Q/ARC beat", "LRU/2Q/ARC win"}},
	} {
		label, line, ok := bulletSaying(md, c.comparison)
		if !ok {
			t.Errorf("no family bullet says %q:\n%s", c.comparison, md)
			continue
		}
		for _, claim := range c.claims {
			if strings.Contains(label, claim) {
				t.Errorf("the label contradicts its own comparison:\n%s", line)
			}
		}
	}
	for _, old := range []string{"Where LFU beats LRU", "Where recency wins"} {
		if b := bullet(md, old); b != "" {
			t.Errorf("a bullet keeps the fixed conclusion %q as its label:\n%s", old, b)
		}
	}
}
