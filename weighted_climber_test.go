package cachekit

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/cachekit/cachekit/internal/mix"
)

// The weighted hill climber runs inside Add (TinyLFU.push calls climb),
// when the cache may already be over its maximum, and its shrinkWindow
// moved the window's oldest entries, the new key among them, to probation
// with no admission test; Evict then found the window empty and evicted the
// main space's victims unconditionally: with MaxWeight 5000, one Set of a
// never-read key of weight 164 evicted 20 keys read 20 times each. Over the
// maximum, shrinkWindow now only lowers the target, and the entries over it
// leave the window through Evict's admission. Deterministic: a fixed key
// hash (setHasher), weights from a PCG(seed, 1) named in each failure, the
// background goroutine asleep in the synctest bubble.
func TestWeightedClimberShrinkKeepsAdmission(t *testing.T) {
	for _, maxW := range []uint64{1000, 2000, 5000} {
		for seed := uint64(1); seed <= 10; seed++ {
			var msg string
			synctest.Test(t, func(*testing.T) { msg = wrScanLosesHotKeys(maxW, seed) })
			if msg != "" {
				t.Errorf("MaxWeight %d, weights from PCG(%d, 1): %s", maxW, seed, msg)
			}
		}
	}
}

// wrScanLosesHotKeys fills a cache bounded by maxW (default policy) with
// one-hit filler keys to 60%, adds 20 hot keys of weight 1 and reads each 20
// times, fills up to maxW-200, then sets 3000 one-hit scan keys of weights
// 1..200 (each never read). It returns a description of the first scan Set
// that evicted a hot key while its own one-hit key stayed, or "".
func wrScanLosesHotKeys(maxW, seed uint64) string {
	const hot, reads, scan = 20, 20, 3000
	r := rand.New(rand.NewPCG(seed, 1))
	weight := map[int]uint32{}
	var evictedHot []int
	c := Must(Options[int, int]{
		MaxWeight: maxW,
		Weigher:   func(k, _ int) uint32 { return weight[k] },
		OnEvict: func(k, _ int, _ Cause) {
			if k < hot {
				evictedHot = append(evictedHot, k)
			}
		},
	})
	ctPin(c)
	defer c.Close()
	c.setHasher(func(k int) uint64 { return mix.Mix(uint64(k) ^ 0x5bd1e995) })
	k := 1_000_000
	for c.Stats().Weight < maxW*6/10 {
		weight[k] = uint32(1 + r.IntN(200))
		c.Set(k, k)
		k++
	}
	for i := range hot {
		weight[i] = 1
		c.Set(i, i)
	}
	for range reads {
		for i := range hot {
			c.Get(i)
		}
	}
	for c.Stats().Weight < maxW-200 {
		weight[k] = uint32(1 + r.IntN(200))
		c.Set(k, k)
		k++
	}
	c.settle()
	for i := range hot {
		if _, ok := c.Peek(i); !ok {
			return "" // not the scenario: a hot key was lost before the scan
		}
	}
	evictedHot = nil
	for j := range scan {
		key := 2_000_000 + j
		weight[key] = uint32(1 + r.IntN(200))
		c.Set(key, key)
		c.settle()
		if len(evictedHot) > 0 {
			if _, kept := c.Peek(key); kept {
				return fmt.Sprintf("scan Set %d of key %d (weight %d, never read) evicted %d hot keys %v (weight 1, read %d times each), and the one-hit key stayed",
					j, key, weight[key], len(evictedHot), evictedHot, reads)
			}
			evictedHot = nil
		}
	}
	return ""
}
