package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// With weights, S3-FIFO trimmed its ghost to the main queue's entry count
// only when a small-queue eviction added to it: once main lost entries to
// its own evictions, the ghost still remembered, and sent straight to main,
// keys evicted far more small evictions ago than main then held entries,
// contrary to its doc ("the number of entries main holds now when weights
// vary").
func TestS3FIFOWeightedGhostFollowsMainNow(t *testing.T) {
	p := NewS3FIFO(100, true, node.KeyedHash) // small 10, main 90
	d := newDriver(t, p)
	for k := uint64(1); k <= 100; k++ {
		d.expect("filling", d.add(k, 1))
	}
	for k := uint64(1); k <= 90; k++ {
		d.get(k, k) // read twice: promoted to main when small gives them
	}
	// Adding 101 promotes 1..90 to main (its full share) and evicts 91
	// into the ghost; 102..190 evict 92..180. Main holds 90 entries, so
	// the ghost holds the 90 latest small evictions, 91..180.
	for k := uint64(101); k <= 190; k++ {
		d.expect("adding", d.add(k, 1), k-10)
	}
	// A write makes 1 weigh 61: main, over its share, evicts its oldest
	// entries 2..61 (1 is read by the write, so it is spared once), and
	// the weight is within the maximum again. No small eviction follows.
	want := make([]uint64, 0, 60)
	for k := uint64(2); k <= 61; k++ {
		want = append(want, k)
	}
	d.expect("writing 1 with weight 61", d.set(1, 61), want...)
	mainLen := p.main.Len() // 62..90 and 1: 30 entries
	// 91, evicted 90 small evictions ago, comes back: main holds 30
	// entries, so the ghost should only remember the 30 latest (151..180)
	// and 91 enter the small queue. (The ghost is trimmed when it is
	// consulted, by Add.)
	d.add(91, 1)
	var remembered []uint64
	for k := uint64(92); k <= 180; k++ {
		if p.ghost.find(mix.Mix(k)) >= 0 {
			remembered = append(remembered, k)
		}
	}
	if n := d.nodes[91]; n == nil || n.Queue != qS3Small {
		t.Errorf("91, 90 small evictions old while main holds %d entries, did not enter the small queue", mainLen)
	}
	if len(remembered) > mainLen {
		t.Errorf("main holds %d entries, but the ghost remembers %d keys (%d..%d)",
			mainLen, len(remembered), remembered[0], remembered[len(remembered)-1])
	}
}
