package sim

import (
	"slices"
	"testing"

	"github.com/cachekit/cachekit/internal/policy"
)

// TestClassicPoliciesAdmit: every policy but W-TinyLFU admits each
// missed key. Once every resident had been read, LFU-DA, LRFU and DLFU
// (and S3-FIFO with a small queue holding only the new key) evicted the
// new key at once: the cache froze, and every request of a new key,
// however often repeated, missed.
func TestClassicPoliciesAdmit(t *testing.T) {
	specs := []string{"lfu", "lrfu", "lrfu:0", "dlfu", "dlfu:inf", "lru", "fifo", "clock", "sieve", "s3fifo", "random"}
	for _, name := range policy.Names() {
		if name != "tinylfu" && !slices.Contains(specs, name) {
			t.Fatalf("policy %s is not covered", name)
		}
	}
	// 1 and 2 read twice, then 3, 4 and 5 requested twice each: each
	// second request hits.
	keys := []uint64{1, 2, 1, 2, 1, 2, 3, 3, 4, 4, 5, 5}
	for _, spec := range specs {
		p, err := NewPolicy(spec, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r := Replay(p, keys); r.Hits != 7 || p.refused != 0 {
			t.Errorf("%s: %v: %d hits, %d refused; want 7 hits (1 and 2 four times, then 3, 4 and 5), none refused", spec, keys, r.Hits, p.refused)
		}
	}
}
