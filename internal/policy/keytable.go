package policy

import "iter"

// keyTable maps the hash of a key the miniatures hold to its slot, by
// open addressing: a cell holds a slot index (0: empty) and the slot holds
// the hash, so a cell costs two bytes. Linear probing from the cell the
// hash's top bits pick; deleting shifts the cells after it back, so there
// are no tombstones and a lookup stops at the first empty cell. The table
// doubles when it would be more than half full and never shrinks: it
// holds at most a few thousand keys (see miniMinCapacity).
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

// home returns the cell where h's probe starts.
func (t *keyTable) home(h uint64) int { return int(h * 0x9e3779b97f4a7c15 >> t.shift) }

func (t *keyTable) mask() int { return len(t.cells) - 1 }

// len returns the number of keys in the table.
func (t *keyTable) len() int { return t.n }

// get returns the slot of hash h, or 0 if h is not in the table.
func (t *keyTable) get(h uint64, slots []miniKey) uint16 {
	for i := t.home(h); ; i = (i + 1) & t.mask() {
		k := t.cells[i]
		if k == 0 || slots[k].hash == h {
			return k
		}
	}
}

// put adds slot k, whose hash is not in the table yet.
func (t *keyTable) put(k uint16, slots []miniKey) {
	if 2*(t.n+1) > len(t.cells) {
		t.grow(slots)
	}
	t.insert(k, slots[k].hash)
	t.n++
}

func (t *keyTable) insert(k uint16, h uint64) {
	i := t.home(h)
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
			t.insert(k, slots[k].hash)
		}
	}
}

// remove takes slot k, which is in the table, out of it.
func (t *keyTable) remove(k uint16, slots []miniKey) {
	mask := t.mask()
	i := t.home(slots[k].hash)
	for t.cells[i] != k {
		i = (i + 1) & mask
	}
	// Shift back every later cell of the run whose probe passes through
	// the hole: one whose home is at least as far from it as the hole is.
	for j := (i + 1) & mask; t.cells[j] != 0; j = (j + 1) & mask {
		if (j-t.home(slots[t.cells[j]].hash))&mask >= (j-i)&mask {
			t.cells[i] = t.cells[j]
			i = j
		}
	}
	t.cells[i] = 0
	t.n--
}

// all yields every hash in the table and its slot, in no set order.
func (t *keyTable) all(slots []miniKey) iter.Seq2[uint64, uint16] {
	return func(yield func(uint64, uint16) bool) {
		for _, k := range t.cells {
			if k != 0 && !yield(slots[k].hash, k) {
				return
			}
		}
	}
}
