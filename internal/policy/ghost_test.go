package policy

import (
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// The ghost filter remembers the last gen to 2 × gen keys added, forgets
// older ones, and rarely claims a key it was never given.
func TestGhostFilter(t *testing.T) {
	const gen = 1000
	g := newGhostFilter(gen)
	for k := range uint64(gen) {
		g.add(mix.Mix(k))
	}
	for k := range uint64(gen) {
		if !g.has(mix.Mix(k)) {
			t.Fatalf("key %d forgotten within a generation", k)
		}
	}
	for k := range uint64(gen) {
		g.add(mix.Mix(gen + k))
	}
	// Keys 0..gen-1 are now in the previous generation: still there.
	for k := range uint64(2 * gen) {
		if !g.has(mix.Mix(k)) {
			t.Fatalf("key %d forgotten within two generations", k)
		}
	}
	g.add(mix.Mix(2 * gen)) // a new generation: the first gen keys go
	forgotten, falsePos := 0, 0
	for k := range uint64(gen) {
		if !g.has(mix.Mix(k)) {
			forgotten++
		}
		if g.has(mix.Mix(1<<40 + k)) {
			falsePos++
		}
	}
	if forgotten < gen*97/100 {
		t.Errorf("%d of %d keys of two generations ago forgotten", forgotten, gen)
	}
	if falsePos > gen*2/100 {
		t.Errorf("%d false positives in %d keys never added", falsePos, gen)
	}
}

// With the ghost in use, a candidate refused once is admitted when it
// comes back; without it, it is refused again.
func TestTinyLFUGhostAdmits(t *testing.T) {
	for _, use := range []bool{false, true} {
		p := newTinyLFU(10, false, 1, node.KeyedHash)
		p.setWindowShare(0.1) // window 1, main 9
		p.ghost, p.useGhost = newGhostFilter(5), use
		nodes := map[uint64]*node.Node{}
		add := func(k uint64) []uint64 { return addKey(p, nodes, k) }
		for k := uint64(1); k <= 10; k++ {
			add(k)
		}
		// Main holds 1..9, each seen three times: 10 cannot beat them.
		for k := uint64(1); k <= 9; k++ {
			p.sketch.increment(mix.Mix(k))
			p.sketch.increment(mix.Mix(k))
		}
		if ev := add(11); len(ev) != 1 || ev[0] != 10 {
			t.Fatalf("ghost %v: adding 11 evicted %v, want [10]", use, ev)
		}
		add(10) // 11 leaves the window and is refused
		ev := add(12)
		want := uint64(10) // refused again: frequency 2 against 3
		if use {
			want = 1 // admitted: the victim, 1, goes
		}
		if len(ev) != 1 || ev[0] != want {
			t.Fatalf("ghost %v: adding 12 evicted %v, want [%d]", use, ev, want)
		}
	}
}

// The ghost filter is kept only while it is in use: a refusal without it
// leaves the filter alone, and turning it on starts it empty, so that a key
// refused before it was last turned off is not taken for a recent one.
func TestTinyLFUGhostKeptOnlyInUse(t *testing.T) {
	p := newTinyLFU(10, false, 1, node.KeyedHash)
	p.ghost = newGhostFilter(5)
	cand, victim := node.NewKeyed(mix.Mix(100), 1), node.NewKeyed(mix.Mix(200), 1)
	p.sketch.increment(mix.Mix(200)) // the victim wins on frequency
	for _, use := range []bool{false, true} {
		p.setGhost(use)
		if p.admit(cand, victim) {
			t.Fatalf("ghost %v: first refusal admitted", use)
		}
		if got := p.ghost.has(mix.Mix(100)); got != use {
			t.Fatalf("ghost %v: refused key remembered = %v", use, got)
		}
	}
	if !p.admit(cand, victim) {
		t.Fatal("ghost in use: a candidate refused just before was not admitted")
	}
	p.setGhost(false)
	p.setGhost(true)
	if p.ghost.has(mix.Mix(100)) {
		t.Fatal("ghost turned on again: it still remembers a refusal from before")
	}
	if p.admit(cand, victim) {
		t.Fatal("ghost turned on again: an old refusal admitted the candidate")
	}
}
