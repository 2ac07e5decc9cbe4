package sim

import "testing"

// NewCache returns an error and no cache for a bad capacity: the Cache it
// returns with the error must be a nil interface, not an interface
// holding a nil *OPT, *Policy or *Concurrent (which compares != nil and
// panics when used).
func TestNewCacheErrorIsNilCache(t *testing.T) {
	tr := NewTrace([]uint64{1, 2, 3})
	for _, spec := range []string{NameOPT, NameOPTBypass, NameCache, "lru", "default"} {
		c, err := tr.NewCache(spec, 0)
		if err == nil {
			t.Fatalf("NewCache(%q, 0): no error", spec)
		}
		if c != nil {
			t.Errorf("NewCache(%q, 0) = %#v, %v; want a nil Cache with the error", spec, c, err)
		}
	}
}
