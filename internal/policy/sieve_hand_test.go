package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// TestSieveHandNeverRestsOnFresh: removing the entry under the hand while
// an insertion is under way must not put the hand on the entry being
// inserted, which SIEVE never evicts while an older unvisited entry is left.
func TestSieveHandNeverRestsOnFresh(t *testing.T) {
	d := newDriver(t, NewSieve(3))
	d.fill(1, 2, 3)
	d.get(1)
	d.expect("add 4", d.add(4, 1), 2) // 1 spared (bit cleared), 2 evicted, hand on 3
	d.p.Remove(d.nodes[4])            // list 1, 3; hand on 3, the newest
	delete(d.nodes, 4)
	// The owner adds 5 (weight 3) and, in the same batch, deletes 3.
	n := node.NewKeyed(mix.Mix(5), 3)
	d.nodes[5] = n
	d.p.Add(n)
	d.p.Remove(d.nodes[3])
	delete(d.nodes, 3)
	// 1 is the oldest and unvisited; 5 is being inserted.
	d.expect("evict after removing the hand's entry", d.drain(), 1)
}
