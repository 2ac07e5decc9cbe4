package policy

import (
	"math/rand/v2"
	"testing"
)

// TestKeyTableMatchesMap drives a keyTable and a map with the same random
// puts and removals (up to half the table full, so probe runs collide,
// wrap around the end of the table and are cut by removals), and checks
// that both agree.
func TestKeyTableMatchesMap(t *testing.T) {
	const seed = 42
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	for _, space := range []int{16, 200, 3000} {
		slots := make([]miniKey, 1, 64)
		var free []uint16
		kt := newKeyTable()
		want := make(map[uint64]uint16)
		hashes := make([]uint64, space)
		for i := range hashes {
			hashes[i] = r.Uint64()
		}
		for step := range 20 * space {
			h := hashes[r.IntN(space)]
			if k, ok := want[h]; ok && r.IntN(2) == 0 {
				kt.remove(k, slots)
				delete(want, h)
				free = append(free, k)
			} else if !ok {
				var k uint16
				if n := len(free); n > 0 {
					k, free = free[n-1], free[:n-1]
				} else {
					k = uint16(len(slots))
					slots = append(slots, miniKey{})
				}
				slots[k].hash = h
				kt.put(k, slots)
				want[h] = k
			}
			if kt.len() != len(want) {
				t.Fatalf("space %d, step %d: len %d, want %d", space, step, kt.len(), len(want))
			}
			if step%7 != 0 {
				continue
			}
			for _, h := range hashes {
				if got := kt.get(h, slots); got != want[h] {
					t.Fatalf("space %d, step %d: get(%x) = %d, want %d", space, step, h, got, want[h])
				}
			}
			n := 0
			for h, k := range kt.all(slots) {
				n++
				if want[h] != k {
					t.Fatalf("space %d, step %d: all yields %x → %d, want %d", space, step, h, k, want[h])
				}
			}
			if n != len(want) {
				t.Fatalf("space %d, step %d: all yields %d keys, want %d", space, step, n, len(want))
			}
		}
		if 2*kt.len() > len(kt.cells) {
			t.Errorf("space %d: %d keys in %d cells: more than half full", space, kt.len(), len(kt.cells))
		}
	}
}
