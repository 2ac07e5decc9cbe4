package sim

import "testing"

// TestClockKeepsWhatItJustAdmitted: CLOCK always admits a missed key;
// replayed with every resident referenced, it used to evict the new key at
// once, so the request right after it missed.
func TestClockKeepsWhatItJustAdmitted(t *testing.T) {
	p, err := NewPolicy("clock", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	keys := []uint64{1, 2, 1, 2, 3, 3}
	if r := Replay(p, keys); r.Hits != 3 || p.refused != 0 {
		t.Fatalf("%v: %d hits, %d refused; want 3 hits (1, 2, then 3), none refused", keys, r.Hits, p.refused)
	}
}
