package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// S3-FIFO evicts before it inserts and asks the ghost only then (SOSP'23,
// Algorithm 1; libCacheSim). S3FIFO asked the ghost at Add, before the
// evictions its insertion causes: a key whose hash the insertion's own
// small-queue eviction pushed out of the ghost still entered main.
func TestS3FIFOAsksGhostAfterInsertionsEvictions(t *testing.T) {
	// Capacity 3: main's share and the ghost's bound are both 3.
	p := NewS3FIFO(3, false, node.KeyedHash)
	d := newDriver(t, p)
	d.fill(1, 2, 3)
	d.expect("adding 4", d.add(4, 1), 1)
	d.expect("adding 5", d.add(5, 1), 2)
	d.expect("adding 6", d.add(6, 1), 3) // the ghost: 1, 2, 3
	// 1 comes back: its insertion evicts 4 from small, which pushes 1's
	// hash, the oldest, out of the ghost (2, 3, 4): 1 enters small.
	d.expect("adding 1 again", d.add(1, 1), 4)
	if q := d.nodes[1].Queue; q != qS3Small {
		t.Fatalf("1, out of the ghost once its insertion's eviction was done, is in queue %d, want small (%d)", q, qS3Small)
	}
	d.expect("adding 7", d.add(7, 1), 5)
	d.expect("adding 8", d.add(8, 1), 6)
	d.expect("adding 9", d.add(9, 1), 1) // the ghost: 5, 6, 1
	// 1 comes back again: its insertion evicts 7, which pushes 5 out of
	// the ghost (6, 1, 7); 1's hash is still there: 1 enters main.
	d.expect("adding 1 once more", d.add(1, 1), 7)
	if q := d.nodes[1].Queue; q != qS3Main {
		t.Fatalf("1, in the ghost after its insertion's eviction, is in queue %d, want main (%d)", q, qS3Main)
	}
}

// An owner that adds a batch of entries before it evicts (the real Cache
// applies its write queue, then evicts) still has each entry's ghost
// asked: each insertion ends at the next Add.
func TestS3FIFOBatchedAddsAskGhost(t *testing.T) {
	p := NewS3FIFO(3, false, node.KeyedHash)
	d := newDriver(t, p)
	d.fill(1, 2, 3)
	d.expect("adding 4", d.add(4, 1), 1)
	d.expect("adding 5", d.add(5, 1), 2) // the ghost: 1, 2
	n1, n2 := node.NewKeyed(mix.Mix(1), 1), node.NewKeyed(mix.Mix(2), 1)
	d.nodes[1], d.nodes[2] = n1, n2
	p.Add(n1)
	p.Add(n2)
	if n1.Queue != qS3Main || n2.Queue != qS3Small {
		t.Fatalf("before any eviction: 1 in queue %d (want main, %d: its insertion ended at the next Add), 2 in queue %d (want small, %d: its insertion is underway)",
			n1.Queue, qS3Main, n2.Queue, qS3Small)
	}
	d.expect("evicting after the batch", d.drain(), 3, 4)
	if n2.Queue != qS3Main {
		t.Fatalf("2, in the ghost when the batch's evictions were done, is in queue %d, want main (%d)", n2.Queue, qS3Main)
	}
}
