package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/node"
)

// TestTinyLFUReplaceKeepsProtectedWithinShare checks the segmented main
// space of a weighted TinyLFU: protectedMax is "the share of the main space
// kept for protected entries", and demote "moves the oldest protected
// entries to probation while protected is over its share". A write
// (Replace) that makes a protected entry heavier must demote as a read
// into protected does; otherwise protected stays over its share (here with
// no further read of a probation entry, for good) and probation, where
// admitted candidates compete, shrinks accordingly.
func TestTinyLFUReplaceKeepsProtectedWithinShare(t *testing.T) {
	const max = 100
	t.Log("TinyLFU seed 1, no random operations")
	p := NewTinyLFU(max, true, 1, node.KeyedHash)
	d := newDriver(t, p)
	for k := uint64(1); k <= max; k++ {
		d.expect("filling", d.add(k, 1))
	}
	// Read keys 2..40 once: from probation to protected (well within its
	// share of 79).
	for k := uint64(2); k <= 40; k++ {
		d.get(k)
	}
	if p.protected.Len() == 0 {
		t.Fatalf("nothing promoted to protected")
	}
	// Rewrite protected key 2 with weight 60: the cache goes over its
	// maximum by 59, and probation's oldest entries go.
	d.set(2, 60)
	if w, m := p.protected.Weight(), p.protectedMax; w > m && p.protected.Len() > 1 {
		t.Fatalf("after a write made a protected entry heavier, protected weighs %d (%d entries), over its share %d", w, p.protected.Len(), m)
	}
}
