package policy

import "testing"

// TestClockAdmitsNewEntry: CLOCK evicts before it inserts, so the entry
// being inserted is never the victim of its own insertion (unless it weighs
// more than the maximum alone). The owner adds first: with every resident
// referenced, the sweep used to move them all behind the new entry and
// evict it, refusing a write CLOCK always keeps.
func TestClockAdmitsNewEntry(t *testing.T) {
	d := newDriver(t, NewClock(2))
	d.fill(1, 2)
	d.get(1, 2)
	d.expect("adding 3 with every resident referenced", d.add(3, 1), 1)
	if d.nodes[3] == nil {
		t.Fatal("the new entry is not tracked")
	}

	// Weighted: an entry of weight 2 into 1r 2r 3r of max 3 takes the
	// places of the two oldest, as CLOCK's sweep before the insertion does.
	d = newDriver(t, NewClock(3))
	d.fill(1, 2, 3)
	d.get(1, 2, 3)
	d.expect("adding 4 of weight 2", d.add(4, 2), 1, 2)

	// Alone over the maximum, the new entry goes, referenced or not.
	d = newDriver(t, NewClock(2))
	d.fill(1)
	d.get(1)
	d.expect("adding 2 of weight 3", d.add(2, 3), 1, 2)
	if d.p.Len() != 0 || d.p.Weight() != 0 {
		t.Fatalf("Len %d, Weight %d after evicting everything", d.p.Len(), d.p.Weight())
	}
}
