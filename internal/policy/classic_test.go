package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// classicNames are the policies registered by lru.go, fifo.go, clock.go,
// sieve.go, s3fifo.go, lfu.go, lrfu.go, dlfu.go and random.go.
var classicNames = []string{"lru", "fifo", "clock", "sieve", "s3fifo", "lfu", "lrfu", "dlfu", "random"}

// driver feeds a policy keyed nodes (the key is mix.Unmix(Hash)) and reports what
// it evicts.
type driver struct {
	t     *testing.T
	p     Policy
	nodes map[uint64]*node.Node
}

func newDriver(t *testing.T, p Policy) *driver {
	return &driver{t: t, p: p, nodes: map[uint64]*node.Node{}}
}

// drain evicts until the policy is within its maximum and returns the
// victims' keys.
func (d *driver) drain() []uint64 {
	var out []uint64
	for v := d.p.Evict(); v != nil; v = d.p.Evict() {
		k := mix.Unmix(node.KeyedHash(v))
		if d.nodes[k] != v {
			d.t.Fatalf("evicted a node that is not tracked (key %d)", k)
		}
		delete(d.nodes, k)
		out = append(out, k)
	}
	return out
}

// add adds key k with weight w and returns the evicted keys.
func (d *driver) add(k uint64, w uint32) []uint64 {
	d.t.Helper()
	if d.nodes[k] != nil {
		d.t.Fatalf("key %d is already tracked", k)
	}
	n := node.NewKeyed(mix.Mix(k), w)
	d.nodes[k] = n
	d.p.Add(n)
	return d.drain()
}

// get reads the keys ks.
func (d *driver) get(ks ...uint64) {
	d.t.Helper()
	for _, k := range ks {
		n := d.nodes[k]
		if n == nil {
			d.t.Fatalf("read of key %d, which is not tracked", k)
		}
		d.p.Access(n)
	}
}

// set writes key k with a new node of weight w and returns the evicted keys.
func (d *driver) set(k uint64, w uint32) []uint64 {
	d.t.Helper()
	old := d.nodes[k]
	if old == nil {
		d.t.Fatalf("write of key %d, which is not tracked", k)
	}
	n := node.NewKeyed(mix.Mix(k), w)
	d.nodes[k] = n
	d.p.Replace(old, n)
	return d.drain()
}

// expect checks evicted keys.
func (d *driver) expect(step string, got []uint64, want ...uint64) {
	d.t.Helper()
	if !slices.Equal(got, want) {
		d.t.Fatalf("%s evicted %v, want %v", step, got, want)
	}
}

func (d *driver) fill(keys ...uint64) {
	d.t.Helper()
	for _, k := range keys {
		d.expect("filling", d.add(k, 1))
	}
}

func TestLRUOrder(t *testing.T) {
	d := newDriver(t, NewLRU(3))
	d.fill(1, 2, 3)
	// Recency order (oldest first) 1 2 3; reading 1 makes it 2 3 1.
	d.get(1)
	d.expect("adding 4", d.add(4, 1), 2)
	// 3 1 4; writing 3 is a use: 1 4 3.
	d.expect("writing 3", d.set(3, 1))
	d.expect("adding 5", d.add(5, 1), 1)
	// 4 3 5 and a node of weight 3: the three others must go, oldest first.
	d.expect("adding 6 (weight 3)", d.add(6, 3), 4, 3, 5)
	// A node heavier than the maximum is evicted itself, after 6.
	d.expect("adding 7 (weight 5)", d.add(7, 5), 6, 7)
	if d.p.Len() != 0 || d.p.Weight() != 0 {
		t.Fatalf("Len %d Weight %d after everything was evicted", d.p.Len(), d.p.Weight())
	}
	// A weightless node never forces an eviction by itself.
	d.fill(8, 9, 10)
	d.expect("adding 11 (weight 0)", d.add(11, 0))
	d.expect("adding 12", d.add(12, 1), 8)
}

func TestFIFOOrder(t *testing.T) {
	d := newDriver(t, NewFIFO(3))
	d.fill(1, 2, 3)
	// Reads do not matter: 1 is the oldest.
	d.get(1, 1, 1)
	d.expect("adding 4", d.add(4, 1), 1)
	// Queue 2 3 4; writing 2 keeps its place at the front.
	d.expect("writing 2", d.set(2, 1))
	d.expect("adding 5", d.add(5, 1), 2)
	// Writing 3 with weight 2 makes 4 too heavy: the oldest, 3 itself, goes.
	d.expect("writing 3 (weight 2)", d.set(3, 2), 3)
}

func TestClockOrder(t *testing.T) {
	// The list is the clock face, the hand at its front; r marks the
	// referenced bit; [n] is the entry being inserted, which CLOCK puts in
	// the victim's place, behind the entries the hand spared.
	d := newDriver(t, NewClock(3))
	d.fill(1, 2, 3)
	d.get(1)
	// 1r 2 3 [4]: 1 is spared (bit cleared, moved behind 3): 2 3 1 [4].
	// 2 is not referenced and goes: 3 1 4.
	d.expect("adding 4", d.add(4, 1), 2)
	d.get(3, 4)
	// 3r 1 4r [5]: 3 is spared (1 4r 3 [5]); 1 lost its bit when it was
	// spared and goes: 4r 3 5.
	d.expect("adding 5", d.add(5, 1), 1)
	// 4r 3 5 [6]: 4 is spared (3 5 4 [6]); 3's bit was cleared when it was
	// spared: 5 4 6.
	d.expect("adding 6", d.add(6, 1), 3)
	// 5 4 6 [7]: 5 was never used: 4 6 7.
	d.expect("adding 7", d.add(7, 1), 5)
	// 4 6 7 [8], and writing 6 sets its bit: 4 goes first anyway.
	d.expect("writing 6", d.set(6, 1))
	d.expect("adding 8", d.add(8, 1), 4)
	// 6r 7 8 [9]: 6 is spared (7 8 6 [9]), 7 goes: 8 6 9.
	d.expect("adding 9", d.add(9, 1), 7)
	// 8r 6r 9r [10]: every entry is spared once, and 8, under the hand
	// again, goes; the entry being inserted is not on the face yet.
	d.get(8, 6, 9)
	d.expect("adding 10", d.add(10, 1), 8)
}

func TestSieveOrder(t *testing.T) {
	// Queues are written oldest first; * marks the visited bit; [n] is the
	// entry being inserted, which the hand treats as past the newest end
	// (SIEVE evicts before it inserts).
	p := NewSieve(3)
	d := newDriver(t, p)
	d.fill(1, 2, 3)
	d.get(1, 3)
	// 1* 2 3* [4], the hand at the oldest. 1 is visited: cleared, and the
	// hand moves on to 2, which is not: 2 goes and the hand rests on 3.
	// Survivors keep their place.
	d.expect("adding 4", d.add(4, 1), 2)
	// 1 3* 4 [5], hand on 3: cleared; 4 is unvisited and goes. The next
	// entry is the one being inserted: the hand wraps to the oldest.
	d.expect("adding 5", d.add(5, 1), 4)
	d.get(1)
	// 1* 3 5 [6], hand at the oldest: 1 is cleared, 3 goes; hand on 5.
	d.expect("adding 6", d.add(6, 1), 3)
	d.get(6)
	// 1 5 6* [7], hand on 5: unvisited, it goes; hand on 6.
	d.expect("adding 7", d.add(7, 1), 5)
	// 1 6* 7: removing 6, under the hand, moves the hand to 7.
	d.p.Remove(d.nodes[6])
	delete(d.nodes, 6)
	d.get(7)
	// 1 7* [8]: within the bound.
	d.expect("adding 8", d.add(8, 1))
	// 1 7* 8 [9], hand on 7: cleared; 8 goes; the hand wraps.
	d.expect("adding 9", d.add(9, 1), 8)
	// Writing 9 keeps its place and marks it visited.
	d.expect("writing 9", d.set(9, 1))
	// 1 7 9* [10], hand at the oldest: 1 (cleared when 6 was added) goes;
	// hand on 7.
	d.expect("adding 10", d.add(10, 1), 1)
	// 7 9* 10 [11], hand on 7 (cleared when 9 was added): it goes.
	d.expect("adding 11", d.add(11, 1), 7)
	// 9* 10 11 [12], hand on 9: cleared; 10 goes.
	d.expect("adding 12", d.add(12, 1), 10)
}

// SIEVE must match a direct transcription of the paper's algorithm (evict,
// then insert at the head) on a random stream.
func TestSieveMatchesReference(t *testing.T) {
	const seed, capacity = 5, 50
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	p := NewSieve(capacity)
	d := newDriver(t, p)
	type ent struct {
		key     uint64
		visited bool
	}
	var q []*ent // oldest first
	ref := map[uint64]*ent{}
	hand := -1 // index into q, -1 = wrap to the oldest
	for i := range 50_000 {
		k := r.Uint64N(200)
		_, hit := d.nodes[k]
		if _, refHit := ref[k]; hit != refHit {
			t.Fatalf("request %d, key %d: hit %v, reference hit %v", i, k, hit, refHit)
		}
		if hit {
			d.get(k)
			ref[k].visited = true
			continue
		}
		if len(q) == capacity {
			j := hand
			if j < 0 {
				j = 0
			}
			for q[j].visited {
				q[j].visited = false
				if j++; j == len(q) {
					j = 0
				}
			}
			delete(ref, q[j].key)
			q = append(q[:j], q[j+1:]...)
			hand = j
			if hand == len(q) {
				hand = -1
			}
		}
		e := &ent{key: k}
		q = append(q, e)
		ref[k] = e
		d.add(k, 1)
	}
}

func TestS3FIFOOrder(t *testing.T) {
	// Max 10: the small queue's share is 1, main's 9. Weights vary to
	// reach main's share quickly; the ghost remembers 9 hashes.
	p := NewS3FIFO(10, false, node.KeyedHash)
	d := newDriver(t, p)
	d.fill(1, 2, 3, 4)
	d.expect("adding 5 (weight 6)", d.add(5, 6))
	// Small: 1 2 3 4 5 (weight 10). Frequencies: 1→2, 2→1, 5→3 (saturated).
	d.get(1, 1, 2, 5, 5, 5, 5)
	// Weight 11. Main is empty, so the small queue gives: 1 (read twice)
	// moves to main with frequency 0; 2 (read once) is evicted, into the
	// ghost.
	d.expect("adding 6", d.add(6, 1), 2)
	// 2 is in the ghost: it goes straight to main (main 1 2). Main holds 2
	// of its 9, so small gives again: 3, never read.
	d.expect("adding 2 again", d.add(2, 1), 3)
	if q := d.nodes[2].Queue; q != qS3Main {
		t.Fatalf("2 came back from the ghost into queue %d, want main", q)
	}
	// Small 4 5 6 7: 4 goes.
	d.expect("adding 7", d.add(7, 1), 4)
	d.get(1)
	// Small 5 6 7 8: 5 (frequency 3) moves to main (1 2 5, weight 8);
	// 6 goes.
	d.expect("adding 8", d.add(8, 1), 6)
	// Small 7 8 9(2): weight 12. Main 8 <= 9: 7 goes, then 8.
	d.expect("adding 9 (weight 2)", d.add(9, 2), 7, 8)
	// 3 comes back from the ghost into main (1 2 5 3), total 12. S3-FIFO
	// evicts before it inserts: main holds 8 of its 9 without 3, so small
	// gives its oldest, 9.
	d.expect("adding 3 (weight 2) again", d.add(3, 2), 9)
	if d.nodes[3].Queue != qS3Main || d.nodes[1].Flags != 1 {
		t.Fatalf("3 in queue %d, 1 with frequency %d", d.nodes[3].Queue, d.nodes[1].Flags)
	}
	// The ghost received 2 3 4 6 7 8 9 (under its bound of 9, so none was
	// forgotten); 2 and 3 were taken back. Their slots stay in the ring
	// until they reach its head, but they are no longer members.
	if n := p.GhostLen(); n != 7 {
		t.Fatalf("ghost length %d, want 7", n)
	}
	for _, k := range []uint64{2, 3} {
		if p.ghost.find(mix.Mix(k)) >= 0 {
			t.Fatalf("key %d is still in the ghost after coming back", k)
		}
	}
	for _, k := range []uint64{4, 6, 7, 8, 9} {
		if p.ghost.find(mix.Mix(k)) < 0 {
			t.Fatalf("key %d is not in the ghost", k)
		}
	}
	// Main 1 2 5 3 weighs 10, over its share: main gives. 1 has frequency
	// 1, so it is reinserted with 0 (2 5 3 1); 2 has 0 and goes.
	d.expect("adding 10", d.add(10, 1), 2)
}

func TestGhostBounded(t *testing.T) {
	var g ghostQueue
	const bound = 100
	r := rand.New(rand.NewPCG(1, 2))
	inRing := map[uint64]uint64{} // hash -> latest seq
	for i := range 100_000 {
		h := r.Uint64N(300)
		if r.IntN(3) == 0 {
			if got := g.take(h); got != (inRing[h] != 0) {
				t.Fatalf("op %d: take(%d) = %v", i, h, got)
			}
			delete(inRing, h)
			continue
		}
		g.add(h, bound)
		inRing[h] = g.tail - 1
		for k, s := range inRing {
			if s < g.head {
				delete(inRing, k)
			}
		}
		if g.len() > bound || len(g.ring) > 128 {
			t.Fatalf("op %d: %d hashes in a ring of %d, bound %d", i, g.len(), len(g.ring), bound)
		}
	}
	for h := range uint64(300) {
		if (g.find(h) >= 0) != (inRing[h] != 0) {
			t.Fatalf("hash %d: membership disagrees", h)
		}
	}
}

func TestLFUOrder(t *testing.T) {
	p := NewLFU(3)
	d := newDriver(t, p)
	// Keys are count + age, age 0: 1, 2, 3 all have key 1.
	d.fill(1, 2, 3)
	d.get(1, 1) // 1: count 3, key 3
	d.get(2)    // 2: count 2, key 2
	// LFU-DA evicts before it inserts: 3 (key 1) goes, the age becomes 1,
	// and 4 enters with key 1 + 1 = 2.
	d.expect("adding 4", d.add(4, 1), 3)
	// 2 and 4 have key 2: 2, used before 4 was added, goes. Age 2; 5
	// enters with key 3.
	d.expect("adding 5", d.add(5, 1), 2)
	// 4 (key 2) goes. Age 2; 6 enters with key 3.
	d.expect("adding 6", d.add(6, 1), 4)
	// 1, 5 and 6 have key 3: 1 is the least recently used of them and
	// goes, although it has the most references: the age has caught up
	// with its past popularity. Age 3; 7 enters with key 4.
	d.expect("adding 7", d.add(7, 1), 1)
	// Reading 6 makes its key count 2 + age 3 = 5.
	d.get(6)
	// 5 (key 3) goes; 8 enters with key 4.
	d.expect("adding 8", d.add(8, 1), 5)
	if p.Age() != 3 {
		t.Fatalf("age %v, want 3", p.Age())
	}
	// Writing 7 keeps its count (1) and adds a reference: key 2 + 3 = 5.
	d.expect("writing 7", d.set(7, 1))
	// 8 (key 4) is the lowest, below 6 and 7 (5): it goes, the age is 4,
	// and 9 enters with key 5.
	d.expect("adding 9", d.add(9, 1), 8)
	// 6, 7 and 9 have key 5: 6, the least recently used, goes. Age 5.
	d.expect("adding 10", d.add(10, 1), 6)
	if p.Age() != 5 {
		t.Fatalf("age %v, want 5", p.Age())
	}
}

func TestLRFUOrder(t *testing.T) {
	p := NewLRFU(3, 0.5)
	d := newDriver(t, p)
	// With λ = 1/2 a reference k steps ago weighs 2^(-k/2).
	d.fill(1, 2, 3) // t = 1, 2, 3
	d.get(1)        // t = 4: CRF(1) = 1 + 2^(-3/2) = 1.354
	if got := p.CRF(d.nodes[1]); math.Abs(got-(1+math.Pow(2, -1.5))) > 1e-12 {
		t.Fatalf("CRF of 1 is %v", got)
	}
	// t = 5, after adding 4: 1 → 1.354·2^(-1/2) = 0.957, 2 → 2^(-3/2) =
	// 0.354, 3 → 2^(-1) = 0.5, 4 → 1. 2 goes.
	d.expect("adding 4", d.add(4, 1), 2)
	d.get(3) // t = 6: CRF(3) = 1 + 0.5·2^(-1/2) = 1.354
	// t = 7: 1 → 0.957·2^(-1) = 0.479, 3 → 1.354·2^(-1/2) = 0.957,
	// 4 → 2^(-1) = 0.5, 5 → 1. 1 goes.
	d.expect("adding 5", d.add(5, 1), 1)
	// t = 8, writing 4: 0.5·2^(-1/2) + 1 = 1.354.
	d.expect("writing 4", d.set(4, 1))
	// t = 9: 3 → 0.957·2^(-1) = 0.479, 4 → 0.957, 5 → 1·2^(-1) = 0.5,
	// 6 → 1. 3 goes, just under 5.
	d.expect("adding 6", d.add(6, 1), 3)

	// λ = 0 is LFU without aging: counts, the oldest first among equals.
	d = newDriver(t, NewLRFU(2, 0))
	d.fill(1, 2)
	d.get(1, 1, 2) // 1: 3, 2: 2
	d.expect("λ=0 adding 3", d.add(3, 1), 2)
	d.expect("λ=0 adding 4", d.add(4, 1), 3) // 1: 3, 3: 1
	d.get(4, 4, 4)                           // 4: 4
	d.expect("λ=0 adding 5", d.add(5, 1), 1)
}

// TestLRFUIsLRUAtOne checks that LRFU with λ = 1, and DLFU whose increment
// doubles at every reference (the same decay) or would grow even faster,
// evict exactly what LRU evicts on a random stream: one reference
// outweighs all older ones together.
func TestLRFUIsLRUAtOne(t *testing.T) {
	const max = 20
	r := rand.New(rand.NewPCG(5, 6))
	ref := newDriver(t, NewLRU(max))
	others := []*driver{
		newDriver(t, NewLRFU(max, 1)),
		newDriver(t, NewDLFU(max, false, 1.0/max)), // grows by 1 + 1/1 = 2
		newDriver(t, NewDLFU(max, false, 1e-300)),  // faster decay is capped at 2
	}
	for i := range 30_000 {
		k := r.Uint64N(3 * max)
		w := uint32(1 + r.IntN(3))
		var want []uint64
		var op func(d *driver) []uint64
		switch {
		case ref.nodes[k] == nil:
			op = func(d *driver) []uint64 { return d.add(k, w) }
		case r.IntN(4) == 0:
			op = func(d *driver) []uint64 { return d.set(k, w) }
		default:
			op = func(d *driver) []uint64 { d.get(k); return nil }
		}
		want = op(ref)
		for j, d := range others {
			if got := op(d); !slices.Equal(got, want) {
				t.Fatalf("op %d, policy %d: evicted %v, LRU evicted %v", i, j, got, want)
			}
		}
	}
	// The DLFU's increment doubled at every reference, 2^30000 without
	// the rescaling.
	for _, dlfu := range others[1:] {
		for _, n := range dlfu.nodes {
			score, incr := dlfu.p.(*DLFU).Score(n)
			if math.IsInf(score, 0) || math.IsNaN(score) || incr > dlfuRescale || incr < 1 {
				t.Fatalf("score %v, increment %v", score, incr)
			}
		}
	}
}

func TestDLFUOrder(t *testing.T) {
	// m = 1, Max 2: T = 2, the increment grows by 1.5 per reference.
	p := NewDLFU(2, false, 1)
	d := newDriver(t, p)
	d.fill(1, 2) // 1: 1, 2: 1.5; increment 2.25
	d.get(1, 1)  // 1: 1 + 2.25 + 3.375 = 6.625; increment 5.0625
	if s, incr := p.Score(d.nodes[1]); s != 6.625 || incr != 5.0625 {
		t.Fatalf("score %v increment %v, want 6.625 and 5.0625", s, incr)
	}
	// 3 enters at 5.0625: 2 (1.5) goes.
	d.expect("adding 3", d.add(3, 1), 2)
	// 4 enters at 7.59375: 3 (5.0625) goes.
	d.expect("adding 4", d.add(4, 1), 3)
	// 5 enters at 11.390625: 1 (6.625), read three times, has decayed
	// below 4 (7.59375), read once: 1 goes.
	d.expect("adding 5", d.add(5, 1), 1)

	// Without decay (m = +Inf), the same sequence keeps the frequent 1.
	d = newDriver(t, NewDLFU(2, false, math.Inf(1)))
	d.fill(1, 2)
	d.get(1, 1) // 1: 3, 2: 1
	d.expect("no decay, adding 3", d.add(3, 1), 2)
	d.expect("no decay, adding 4", d.add(4, 1), 3) // 3 (1) below 1 (3)
	d.expect("no decay, adding 5", d.add(5, 1), 4)
}

func TestRandomPolicy(t *testing.T) {
	run := func(seed uint64) []uint64 {
		d := newDriver(t, NewRandom(10, seed))
		var out []uint64
		for k := range uint64(200) {
			out = append(out, d.add(k, 1)...)
			if k%3 == 0 && d.nodes[k] != nil {
				d.get(k)
			}
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave different victims")
	}
	if slices.Equal(a, c) {
		t.Fatal("different seeds gave the same victims")
	}
	// Victims are uniform among the tracked entries other than the one
	// being inserted: with 4 entries of which one is replaced each time,
	// each is hit about 1/4 of the time, and the newcomer never.
	p := NewRandom(4, 3)
	d := newDriver(t, p)
	d.fill(1, 2, 3, 4)
	counts := map[uint64]int{}
	const rounds = 50_000
	for i := range rounds {
		k := uint64(100 + i)
		ev := d.add(k, 1)
		if len(ev) != 1 {
			t.Fatalf("evicted %v", ev)
		}
		if ev[0] == k {
			counts[0]++
		} else if ev[0] <= 4 {
			counts[ev[0]]++
		}
		// Put the fixed keys back so they stay candidates.
		if ev[0] <= 4 {
			d.p.Remove(d.nodes[k])
			delete(d.nodes, k)
			d.add(ev[0], 1)
		}
	}
	if counts[0] != 0 {
		t.Fatalf("the newcomer was the victim %d times (%v)", counts[0], counts)
	}
	for k := uint64(1); k <= 4; k++ {
		if got := float64(counts[k]) / rounds; math.Abs(got-0.25) > 0.01 {
			t.Fatalf("victim share of %d: %v, want 0.25 (%v)", k, got, counts)
		}
	}
}

// TestUntrackedQueue checks that the policies that keep their nodes in a
// heap or a slice clear a node's Queue when they stop tracking it, however
// that happens, and forget it.
func TestUntrackedQueue(t *testing.T) {
	for _, name := range []string{"lfu", "lrfu", "dlfu", "random"} {
		p := newNamed(t, name, 3, false)
		ns := make([]*node.Node, 8)
		for i := range ns {
			ns[i] = node.NewKeyed(mix.Mix(uint64(i)), 1)
		}
		for _, n := range ns[:5] {
			p.Add(n)
		}
		p.Remove(ns[1])
		p.Replace(ns[2], ns[5])
		var evicted []*node.Node
		for v := p.Evict(); v != nil; v = p.Evict() {
			evicted = append(evicted, v)
		}
		for _, n := range append(evicted, ns[1], ns[2]) {
			if n.Queue != 0 {
				t.Fatalf("%s: untracked node %d has Queue %d", name, mix.Unmix(node.KeyedHash(n)), n.Queue)
			}
		}
		if p.Len() != 3 {
			t.Fatalf("%s: Len %d after evicting down to 3", name, p.Len())
		}
		for _, n := range []*node.Node{ns[0], ns[3], ns[4], ns[5]} {
			if n.Queue != 0 {
				p.Remove(n)
			}
		}
		if p.Len() != 0 || p.Weight() != 0 {
			t.Fatalf("%s: Len %d, Weight %d after removing every node", name, p.Len(), p.Weight())
		}
	}
}

func TestClassicParams(t *testing.T) {
	for _, name := range []string{"lru", "fifo", "clock", "sieve", "s3fifo", "lfu", "random"} {
		if _, err := New(name+":1", 10, false, 1, node.KeyedHash); err == nil {
			t.Errorf("%s accepted a parameter", name)
		}
		if _, err := New(name, 10, false, 1, node.KeyedHash); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for spec, ok := range map[string]bool{
		"lrfu": true, "lrfu:0": true, "lrfu:1": true, "lrfu:0.25": true,
		"lrfu:-0.1": false, "lrfu:1.5": false, "lrfu:inf": false, "lrfu:nan": false, "dlfu:nan": false,
		"dlfu": true, "dlfu:0.5": true, "dlfu:100": true, "dlfu:inf": true,
		"dlfu:1e-300": true, "dlfu:0": false, "dlfu:-1": false, "dlfu:-inf": false,
	} {
		p, err := New(spec, 10, false, 1, node.KeyedHash)
		if (err == nil) != ok {
			t.Errorf("%q: error %v, want ok %v", spec, err, ok)
		}
		if err != nil {
			continue
		}
		switch p := p.(type) {
		case *LRFU:
			if want := map[string]float64{"lrfu": DefaultLRFULambda}[spec]; want != 0 && p.Lambda() != want {
				t.Errorf("%q: λ %v, want %v", spec, p.Lambda(), want)
			}
		case *DLFU:
			if spec == "dlfu" && p.m != DefaultDLFUDecay {
				t.Errorf("%q: m %v, want %v", spec, p.m, DefaultDLFUDecay)
			}
		}
	}
	for _, name := range classicNames {
		if Doc(name) == "" {
			t.Errorf("%s is not registered", name)
		}
	}
}

// TestClassicNoAllocs checks that, once warm, adding, reading, writing
// and evicting allocate nothing (the nodes are allocated beforehand).
func TestClassicNoAllocs(t *testing.T) {
	for _, name := range classicNames {
		for _, weighted := range []bool{false, true} {
			const max = 200
			p := newNamed(t, name, max, weighted)
			r := rand.New(rand.NewPCG(9, 9))
			nodes := make([]*node.Node, 4*max)
			spare := make([]*node.Node, len(nodes))
			tracked := make([]bool, len(nodes))
			for i := range nodes {
				w := uint32(1)
				if weighted {
					w = uint32(i % 4)
				}
				nodes[i] = node.NewKeyed(mix.Mix(uint64(i)), w)
				spare[i] = node.NewKeyed(mix.Mix(uint64(i)), w)
			}
			keys := make([]int, 1<<16)
			for i := range keys {
				keys[i] = int(r.ExpFloat64()*max) % len(nodes)
			}
			pos := 0
			step := func() {
				k := keys[pos]
				pos = (pos + 1) % len(keys)
				n := nodes[k]
				switch {
				case !tracked[k]:
					p.Add(n)
					tracked[k] = true
				case pos%7 == 0:
					m := spare[k]
					p.Replace(n, m)
					nodes[k], spare[k] = m, n
				default:
					p.Access(n)
				}
				for v := p.Evict(); v != nil; v = p.Evict() {
					tracked[mix.Unmix(node.KeyedHash(v))] = false
				}
			}
			for range 200_000 {
				step()
			}
			allocs := testing.AllocsPerRun(100, func() {
				for range 1000 {
					step()
				}
			})
			if allocs != 0 {
				t.Errorf("%s (weighted %v): %v allocations per 1000 operations", name, weighted, allocs)
			}
		}
	}
}

// TestClassicThroughput makes sure no policy is pathologically slow: a
// million operations on a skewed stream.
func TestClassicThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, name := range classicNames {
		ratio := replayZipf(newNamed(t, name, 1000, false), 1_000_000, 1)
		t.Logf("%-7s hit ratio %.4f", name, ratio)
	}
}

// replayZipf sends ops references drawn from a Zipf distribution over
// 100 000 keys (s = 1.01) through p and returns the hit ratio.
func replayZipf(p Policy, ops int, seed uint64) float64 {
	const keys = 100_000
	z := rand.NewZipf(rand.New(rand.NewPCG(seed, seed)), 1.01, 1, keys-1)
	nodes := make([]node.Keyed, keys)
	tracked := make([]bool, keys)
	hits := 0
	for range ops {
		k := z.Uint64()
		n := &nodes[k].Node
		if tracked[k] {
			hits++
			p.Access(n)
			continue
		}
		nodes[k] = node.Keyed{Node: node.Node{Weight: 1}, Hash: mix.Mix(k)}
		p.Add(n)
		tracked[k] = true
		for v := p.Evict(); v != nil; v = p.Evict() {
			tracked[mix.Unmix(node.KeyedHash(v))] = false
		}
	}
	return float64(hits) / float64(ops)
}

// BenchmarkPolicies replays a Zipf stream through every registered policy
// (cache of 1000 entries, 100 000 keys, s = 1.01, fixed seed) and reports
// the hit ratio.
func BenchmarkPolicies(b *testing.B) {
	for _, name := range Names() {
		b.Run(name, func(b *testing.B) {
			p, err := New(name, 1000, false, 1, node.KeyedHash)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			ratio := replayZipf(p, b.N, 42)
			b.ReportMetric(ratio, "hit/op")
		})
	}
}
