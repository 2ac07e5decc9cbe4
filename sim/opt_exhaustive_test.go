package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// exhaustiveOPT explores every eviction (and, with bypass, admission) choice.
func exhaustiveOPT(keys []uint64, capacity int, bypass bool) uint64 {
	memo := map[string]uint64{}
	var rec func(i int, res []uint64) uint64
	rec = func(i int, res []uint64) uint64 {
		if i == len(keys) {
			return 0
		}
		s := slices.Clone(res)
		slices.Sort(s)
		mk := fmt.Sprint(i) + ":" + func() string {
			b := []byte{}
			for _, x := range s {
				b = append(b, byte(x), ',')
			}
			return string(b)
		}()
		if v, ok := memo[mk]; ok {
			return v
		}
		k := keys[i]
		var best uint64
		if slices.Contains(res, k) {
			best = 1 + rec(i+1, res)
		} else if len(res) < capacity {
			best = rec(i+1, append(slices.Clone(res), k))
			if bypass {
				best = max(best, rec(i+1, res))
			}
		} else {
			for j := range res {
				r2 := slices.Clone(res)
				r2[j] = k
				best = max(best, rec(i+1, r2))
			}
			if bypass {
				best = max(best, rec(i+1, res))
			}
		}
		memo[mk] = best
		return best
	}
	return rec(0, nil)
}

func TestOPTExhaustive(t *testing.T) {
	for seed := uint64(1); seed <= 400; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		keys := make([]uint64, 1+r.IntN(16))
		nk := 1 + r.IntN(7)
		for i := range keys {
			keys[i] = r.Uint64N(uint64(nk))
		}
		tr := NewTrace(keys)
		for capacity := 1; capacity <= 5; capacity++ {
			for _, bypass := range []bool{false, true} {
				o, _ := NewOPT(tr, capacity, bypass)
				got := Replay(o, keys).Hits
				want := exhaustiveOPT(keys, capacity, bypass)
				if got != want {
					t.Fatalf("seed %d keys %v cap %d bypass %v: got %d want %d", seed, keys, capacity, bypass, got, want)
				}
				for _, name := range []string{"lru", "fifo", "lfu", "lrfu", "dlfu", "clock", "sieve", "s3fifo", "random", "tinylfu"} {
					p, _ := NewPolicy(name, capacity, 1)
					h := Replay(p, keys).Hits
					if name != "tinylfu" && p.refused != 0 {
						// Only W-TinyLFU's admission filter refuses.
						t.Fatalf("%s refused %d admissions: keys %v cap %d", name, p.refused, keys, capacity)
					}
					if h > exhaustiveOPT(keys, capacity, true) || (p.refused == 0 && h > exhaustiveOPT(keys, capacity, false)) {
						t.Fatalf("%s beats opt: keys %v cap %d bypass %v: %d > %d refused %d", name, keys, capacity, bypass, h, want, p.refused)
					}
				}
			}
		}
	}
}
