package footprint

import (
	"strings"
	"testing"
)

// TestMarkdownWithoutConfigs: a JSON file with fewer configurations
// than caches renders, with a dash for the missing ones; Markdown
// panicked (index out of range).
func TestMarkdownWithoutConfigs(t *testing.T) {
	rep := Report{Sizes: []int{1000}, Rounds: 1, Caches: []string{"map", "lru"}, Configs: []string{"m"}}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Markdown with fewer configs than caches panicked: %v", p)
		}
	}()
	if md := rep.Markdown(""); !strings.Contains(md, "| lru | – |") {
		t.Errorf("the caches' table lacks lru without a configuration:\n%s", md)
	}
}
