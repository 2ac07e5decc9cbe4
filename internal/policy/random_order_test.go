package policy

import "testing"

// TestRandomOrder pins Random's exact eviction order for seed 1, as the
// other policies' Order tests do. Random keeps its nodes in a slice (the
// one being added at the end), draws i = IntN(len-1) from
// PCG(1, 1^0x9e3779b97f4a7c15), evicts the node at i and moves the last
// one into its place. That generator's first draws of IntN(3) are
// 1 0 2 0 2 0 1 1, so from [1 2 3]:
//
//	add 4:  [1 2 3 4],  i=1, evicts 2  -> [1 4 3]
//	add 5:  [1 4 3 5],  i=0, evicts 1  -> [5 4 3]
//	add 6:  [5 4 3 6],  i=2, evicts 3  -> [5 4 6]
//	add 7:  [5 4 6 7],  i=0, evicts 5  -> [7 4 6]
//	add 8:  [7 4 6 8],  i=2, evicts 6  -> [7 4 8]
//	add 9:  [7 4 8 9],  i=0, evicts 7  -> [9 4 8]
//	add 10: [9 4 8 10], i=1, evicts 4  -> [9 10 8]
//	add 11: [9 10 8 11], i=1, evicts 10 -> [9 11 8]
//
// Reads change nothing (they draw nothing either).
func TestRandomOrder(t *testing.T) {
	d := newDriver(t, NewRandom(3, 1))
	d.fill(1, 2, 3)
	d.get(3, 3, 1)
	want := map[uint64]uint64{4: 2, 5: 1, 6: 3, 7: 5, 8: 6, 9: 7, 10: 4, 11: 10}
	for k := uint64(4); k <= 11; k++ {
		d.expect("adding", d.add(k, 1), want[k])
		for r := range d.nodes {
			d.get(r)
		}
	}
	for _, k := range []uint64{9, 11, 8} {
		if d.nodes[k] == nil {
			t.Fatalf("key %d should remain, have %v", k, d.nodes)
		}
	}
}
