package stampede

import "testing"

// TestSelectAllWithSpaces: " all" selects every cache, as it does in
// adapter.Select and as spaces around names are ignored; it was refused
// as an unknown cache.
func TestSelectAllWithSpaces(t *testing.T) {
	for _, list := range []string{" all", "all ", " "} {
		fs, err := Select(list)
		if err != nil || len(fs) != len(Factories()) {
			t.Errorf("Select(%q) = %d caches, %v; want all %d", list, len(fs), err, len(Factories()))
		}
	}
}
