package policy

import (
	"math/rand/v2"
	"testing"
	"unsafe"
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
		want := make(map[uint32]uint16)
		hashes := make([]uint32, space)
		for i := range hashes {
			hashes[i] = r.Uint32()
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
				slots[k].id = h
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
			for hash, k := range kt.all(slots) {
				n++
				h := slots[k].id
				if want[h] != k || hash != sampleHash(uint64(h)<<32) {
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

// TestAppendSlotGrowsByAQuarter checks that the miniatures' slot array
// keeps its slots in order as it grows, by about a quarter at a time (not
// doubling), and that past 32 kB its capacity is a whole number of pages in
// bytes (less than a slot of slack), so that it fills its span.
func TestAppendSlotGrowsByAQuarter(t *testing.T) {
	size := int(unsafe.Sizeof(miniKey{}))
	var slots []miniKey
	lastCap := -1
	for i := range 5000 {
		slots = appendSlot(slots)
		slots[i].id = uint32(i)
		if c := cap(slots); c != lastCap {
			if lastCap > 0 {
				// A quarter more, rounded up to a size class (at most an
				// eighth more up to 32 kB) or to pages.
				want := (lastCap + max(16, lastCap/4)) * size
				slack := want / 8
				if want > 32<<10 {
					slack = 8192
				}
				if c*size > want+slack {
					t.Fatalf("at %d slots: capacity %d after %d (%d bytes, want at most %d)", len(slots), c, lastCap, c*size, want+slack)
				}
			}
			lastCap = c
			if bytes := c * size; bytes > 32<<10 && bytes%8192 != 0 && 8192-bytes%8192 >= size {
				t.Fatalf("at %d slots: capacity %d slots = %d bytes, not whole pages", len(slots), c, bytes)
			}
		}
	}
	for i := range slots {
		if slots[i].id != uint32(i) {
			t.Fatalf("slot %d holds %d after growing", i, slots[i].id)
		}
	}
}
