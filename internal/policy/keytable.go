package policy

import "iter"

// keyTable maps the id of a key the miniatures hold (miniKey.id) to its
// slot, by open addressing: a cell holds a slot index (0: empty) and the
// slot holds the id, so a cell costs two bytes. Linear probing from the
// cell picked by the top bits of the id times a constant; deleting shifts
// the cells after it back, so there are no tombstones and a lookup stops
// at the first empty cell. The table doubles when it would be more than
// half full and never shrinks: it holds at most a few thousand keys (see
// miniLeast).
//
// It replaced a map[uint64]uint16, which cost about 35 bytes per key
// against 2 to 8 here: a cache of 1,000 entries under churn holds about
// 1,000 sampled keys, so the map alone cost it 35 bytes per entry.
type keyTable struct {
	cells []uint16
	shift uint // 64 - log2(len(cells))
	n     int
}

const keyTableMin = 64 // cells of a new table

func newKeyTable() keyTable {
	return keyTable{cells: make([]uint16, keyTableMin), shift: 64 - 6}
}

// home returns the cell where id's probe starts.
func (t *keyTable) home(id uint32) int { return int(uint64(id) * 0x9e3779b97f4a7c15 >> t.shift) }

func (t *keyTable) mask() int { return len(t.cells) - 1 }

// len returns the number of keys in the table.
func (t *keyTable) len() int { return t.n }

// get returns the slot of id, or 0 if id is not in the table.
func (t *keyTable) get(id uint32, slots []miniKey) uint16 {
	for i := t.home(id); ; i = (i + 1) & t.mask() {
		k := t.cells[i]
		if k == 0 || slots[k].id == id {
			return k
		}
	}
}

// put adds slot k, whose id is not in the table yet.
func (t *keyTable) put(k uint16, slots []miniKey) {
	if 2*(t.n+1) > len(t.cells) {
		t.grow(slots)
	}
	t.insert(k, slots[k].id)
	t.n++
}

func (t *keyTable) insert(k uint16, id uint32) {
	i := t.home(id)
	for t.cells[i] != 0 {
		i = (i + 1) & t.mask()
	}
	t.cells[i] = k
}

func (t *keyTable) grow(slots []miniKey) {
	old := t.cells
	t.cells = make([]uint16, 2*len(old))
	t.shift--
	for _, k := range old {
		if k != 0 {
			t.insert(k, slots[k].id)
		}
	}
}

// remove takes slot k, which is in the table, out of it.
func (t *keyTable) remove(k uint16, slots []miniKey) {
	mask := t.mask()
	i := t.home(slots[k].id)
	for t.cells[i] != k {
		i = (i + 1) & mask
	}
	// Shift back every later cell of the run whose probe passes through
	// the hole: one whose home is at least as far from it as the hole is.
	for j := (i + 1) & mask; t.cells[j] != 0; j = (j + 1) & mask {
		if (j-t.home(slots[t.cells[j]].id))&mask >= (j-i)&mask {
			t.cells[i] = t.cells[j]
			i = j
		}
	}
	t.cells[i] = 0
	t.n--
}

// all yields the hash (miniKey.hash) of every key in the table and its
// slot, in no set order.
func (t *keyTable) all(slots []miniKey) iter.Seq2[uint64, uint16] {
	return func(yield func(uint64, uint16) bool) {
		for _, k := range t.cells {
			if k != 0 && !yield(slots[k].hash(), k) {
				return
			}
		}
	}
}
