package policy

import (
	"math/rand/v2"
	"testing"
)

// TestBatchedContract checks the contract's invariants when up to 64
// operations come between eviction passes, as when the cache's maintenance
// applies its queued writes, for every policy, weighted or not.
func TestBatchedContract(t *testing.T) {
	for _, name := range Names() {
		for _, weighted := range []bool{false, true} {
			for _, max := range []uint64{1, 2, 3, 7, 50, 300, 5000} {
				for seed := uint64(1); seed <= 3; seed++ {
					p := newNamed(t, name, max, weighted)
					r := rand.New(rand.NewPCG(seed, max+99))
					randomContract(t, name, p, max, weighted, r, contractRun{ops: 40000, passEvery: 64, keys: 4*max + 5})
				}
			}
		}
	}
}
