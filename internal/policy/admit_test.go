package policy

import (
	"math"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// The owner adds before it evicts, where the classic policies evict before
// they insert: the entry being inserted is never the victim of its own
// insertion unless it alone weighs more than the maximum, and the victims
// are those the policy would choose had it evicted first.

// TestLFUDAAdmitsNewEntry: with every resident referenced twice, the new
// entry (one reference) used to be the victim at once, so LFU-DA froze. It
// also took its key from the age before its own eviction.
func TestLFUDAAdmitsNewEntry(t *testing.T) {
	p := NewLFU(2)
	d := newDriver(t, p)
	d.fill(1, 2)
	d.get(1, 2) // keys 2 and 2; 1 used longer ago
	// LFU-DA evicts 1 (age 2), then admits 3 with key 1 + 2 = 3.
	d.expect("adding 3", d.add(3, 1), 1)
	if p.Age() != 2 {
		t.Fatalf("age %v after evicting 1 (key 2), want 2", p.Age())
	}
	// 2 has key 2 < 3's key 3: 2 goes (had 3 been keyed with the age from
	// before its eviction, 0 + 1, it would have gone).
	d.expect("adding 4", d.add(4, 1), 2)
	// 3 and 4 both have key 3: the older, 3, goes; the age is 3.
	d.expect("adding 5", d.add(5, 1), 3)
	if p.Age() != 3 {
		t.Fatalf("age %v, want 3", p.Age())
	}
	// Alone over the maximum, the new entry goes after 4 (key 3) and 5
	// (key 4); the age is 5's key: 6 was never admitted.
	d.expect("adding 6 (weight 3)", d.add(6, 3), 4, 5, 6)
	if p.Age() != 4 || p.Len() != 0 || p.Weight() != 0 {
		t.Fatalf("age %v, Len %d, Weight %d after evicting everything", p.Age(), p.Len(), p.Weight())
	}
}

// TestPlainLFUAdmitsNewEntry: LRFU at λ = 0 and DLFU without decay are
// LFU: the least frequently used of the others goes, the oldest among
// equals; the newcomer is a candidate from the next insertion on.
func TestPlainLFUAdmitsNewEntry(t *testing.T) {
	for _, p := range []Policy{NewLRFU(2, 0), NewDLFU(2, false, math.Inf(1)), NewLRFU(2, DefaultLRFULambda), NewDLFU(2, false, DefaultDLFUDecay)} {
		d := newDriver(t, p)
		d.fill(1, 2)
		d.get(1, 2)
		d.expect("adding 3", d.add(3, 1), 1)
		d.get(2)
		// 3 (one reference) is now the least frequently used.
		d.expect("adding 4", d.add(4, 1), 3)
		if d.nodes[4] == nil || d.nodes[2] == nil {
			t.Fatalf("%T: 2 or 4 is not tracked", p)
		}
	}
}

// TestHeapPoliciesKeepNewEntryThroughReads: reads of the entry being
// inserted, before the owner evicts, do not expose it either; LFU-DA keys
// it with the age after the eviction and every reference it has.
func TestHeapPoliciesKeepNewEntryThroughReads(t *testing.T) {
	p := NewLFU(2)
	d := newDriver(t, p)
	d.fill(1, 2)
	d.get(1, 1, 2, 2) // keys 3 and 3
	n := node.NewKeyed(mix.Mix(3), 1)
	d.nodes[3] = n
	p.Add(n)
	d.get(3) // count 2, still the lowest
	d.expect("evicting after adding 3", d.drain(), 1)
	// Age 3; 3's key is 3 + 2 = 5, 2's is 3.
	d.expect("adding 4", d.add(4, 1), 2)
}

// TestLRUAdmitsNewEntry: writes applied after an Add and before the
// eviction move the other entries behind the new one; LRU still evicts the
// least recently used of the others.
func TestLRUAdmitsNewEntry(t *testing.T) {
	d := newDriver(t, NewLRU(2))
	d.fill(1, 2)
	n := node.NewKeyed(mix.Mix(3), 1)
	d.nodes[3] = n
	d.p.Add(n)
	for _, k := range []uint64{1, 2} {
		m := node.NewKeyed(mix.Mix(k), 1)
		d.p.Replace(d.nodes[k], m)
		d.nodes[k] = m
	}
	d.expect("evicting after adding 3 and writing 1 and 2", d.drain(), 1)
	d.expect("adding 4", d.add(4, 1), 3)
}

// TestRandomAdmitsNewEntry: the victim is drawn among the other entries.
func TestRandomAdmitsNewEntry(t *testing.T) {
	refused, heavyFirst := 0, 0
	for seed := range uint64(64) {
		d := newDriver(t, NewRandom(2, seed))
		d.fill(1, 2)
		if ev := d.add(3, 1); len(ev) != 1 || ev[0] == 3 {
			refused++
		}
		// Alone over the maximum, the new entry goes last.
		if ev := d.add(4, 3); len(ev) != 3 || ev[2] != 4 {
			heavyFirst++
		}
	}
	if refused+heavyFirst > 0 {
		t.Fatalf("of 64 seeds, %d evicted 3 on adding it to 1 2, %d evicted 4 (weight 3) before the others", refused, heavyFirst)
	}
}

// TestS3FIFOAdmitsNewEntry: S3-FIFO evicts from the small queue only if
// it holds an entry other than the new one; otherwise from main.
func TestS3FIFOAdmitsNewEntry(t *testing.T) {
	// Max 2: small's share is 0, main's 2.
	p := NewS3FIFO(2, false, node.KeyedHash)
	d := newDriver(t, p)
	d.fill(1, 2)
	d.get(1, 1, 2, 2)
	// 1 and 2 move to main; small then holds only 3, the new entry, so
	// main gives its oldest, 1 (frequency reset on the move).
	d.expect("adding 3", d.add(3, 1), 1)
	// Small 3 4: 3, never read, goes into the ghost.
	d.expect("adding 4", d.add(4, 1), 3)
	d.get(2)
	d.get(4, 4)
	// 3 comes back from the ghost into main, behind 2. Had S3-FIFO evicted
	// first: small gives 4 (read twice) to main, main 2 4 is within its
	// share and small is empty, so main gives: 2 (frequency 1) is
	// reinserted with 0, and 4 goes. 3 stays at the end of main.
	d.expect("adding 3 again", d.add(3, 1), 4)
	if d.nodes[3] == nil || d.nodes[3].Queue != qS3Main {
		t.Fatal("3 is not in main")
	}
	d.expect("adding 5", d.add(5, 1), 2)

	// Weighted, max 10 (small 1, main 9): main holds 9 within its share and
	// small is empty; 11 of weight 2 enters small. Evicting first, small is
	// empty: main gives its oldest.
	p = NewS3FIFO(10, true, node.KeyedHash)
	d = newDriver(t, p)
	d.fill(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	for k := uint64(1); k <= 9; k++ {
		d.get(k, k)
	}
	d.expect("adding 11", d.add(11, 1), 10) // 1..9 to main, 10 goes
	d.p.Remove(d.nodes[11])
	delete(d.nodes, 11)
	d.expect("adding 12 (weight 2)", d.add(12, 2), 1)
	if d.nodes[12] == nil {
		t.Fatal("12 is not tracked")
	}
}
