package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// "dlfu:1e400" is accepted as +Inf (TestDLFUHugeParam: "a number too large
// for a float64 is the same request"), but the mirror case, a positive
// time constant too small for a float64, is refused as "decay parameter 0
// must be positive": the user gave a positive number, and the message
// quotes a value they never wrote.
func TestDLFUTinyPositiveParam(t *testing.T) {
	if _, err := New("dlfu:1e-400", 10, false, 1, node.KeyedHash); err != nil {
		t.Fatalf("dlfu:1e-400 (positive, below the smallest float64): %v", err)
	}
}

// The hill climber of a weighted TinyLFU moves the window by
// uint64(step), with step = 0.0625 × max at most: for max < 16 that is
// always 0, so the window never adapts, whatever the hit ratio does.
func TestClimberMovesAtSmallMax(t *testing.T) {
	for max := uint64(3); max < 16; max++ {
		p := NewTinyLFU(max, true, 1, node.KeyedHash)
		r := rand.New(rand.NewPCG(1, max))
		byKey := map[uint64]*node.Node{}
		start, moved := p.WindowMax(), false
		for i := 0; i < 200_000 && !moved; i++ {
			// Alternate phases: a hot set that fits, then a scan.
			k := r.Uint64N(max)
			if (i/5000)%2 == 1 {
				k = uint64(i) + 1<<20
			}
			if n := byKey[k]; n != nil {
				p.Access(n)
			} else {
				n = node.NewKeyed(mix.Mix(k), 1)
				byKey[k] = n
				p.Add(n)
				for v := p.Evict(); v != nil; v = p.Evict() {
					delete(byKey, mix.Unmix(node.KeyedHash(v)))
				}
			}
			moved = p.WindowMax() != start
		}
		if !moved {
			t.Errorf("max %d: the hill climber never moved the window (windowMax %d, step %.3f)", max, p.WindowMax(), p.step)
		}
	}
}
