package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/node"
)

// A weighted TinyLFU's candidate heavier than the main space's victim must
// beat every victim that goes to make room for it: one that beats only the
// first must not push out entries more frequent than itself (and then be
// evicted itself once probation runs out ahead of it).
func TestTinyLFUHeavyCandidateBeatsEveryVictim(t *testing.T) {
	for _, cold := range []uint64{10, 60} {
		p := NewTinyLFU(100, true, 1, node.KeyedHash)
		d := newDriver(t, p)
		for k := uint64(1); k <= 100; k++ {
			d.expect("filling", d.add(k, 1))
		}
		// Keys above cold are read five times each: hot. Probation then
		// holds the cold keys, oldest first, then hot keys demoted from
		// protected (at most 79).
		for range 5 {
			for k := cold + 1; k <= 100; k++ {
				d.get(k)
			}
		}
		// Key 1000, of weight 50, is refused once (seen once, as its
		// victim 1), then comes back seen twice, more than any cold key
		// and less than any hot one.
		d.add(1000, 50)
		ev := d.add(1000, 50)
		for _, k := range ev {
			if k > cold && k <= 100 {
				t.Fatalf("%d cold keys: adding key 1000 (weight 50, seen twice) evicted hot key %d (read 5 times): evicted %v", cold, k, ev)
			}
		}
		_, kept := d.nodes[1000]
		if want := cold >= 50; kept != want {
			t.Fatalf("%d cold keys: key 1000 kept %v, want %v (evicted %v)", cold, kept, want, ev)
		}
	}
}
