package bytecache

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestBudget writes entries of random sizes, up to the largest, and checks
// after every Set that the chunks, measured from the chunks themselves,
// never hold more than MaxBytes, whatever the chunk placement and however
// MaxBytes divides.
func TestBudget(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, o := range []Options{
		{MaxBytes: 1 << 20, Shards: 4},
		{MaxBytes: 1<<20 + 12345, Shards: 4},
		onHeap(Options{MaxBytes: 3<<20 + 7, Shards: 2}),
		withChunkShift(Options{MaxBytes: 100_003, Shards: 8}, 12),
		withChunkShift(Options{MaxBytes: 50_001, Shards: 1}, 7),
	} {
		t.Run(fmt.Sprintf("max=%d,shards=%d,chunk=%d,heap=%v", o.MaxBytes, o.Shards, o.chunkShift, o.heap), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, uint64(o.MaxBytes)))
			c := newCache(t, o)
			limit := o.MaxBytes
			var written int64
			for i := 0; written < 20*limit; i++ {
				n := r.IntN(200)
				if r.IntN(20) == 0 {
					n = r.IntN(c.cf.maxValue + 1)
				}
				key := fmt.Appendf(nil, "k%d", r.IntN(5000))
				if err := c.Set(key, make([]byte, n), 0); err != nil {
					continue // too large with its key
				}
				written += int64(n)
				if got := c.chunkCapacity(); got > limit {
					t.Fatalf("after %d Sets the chunks hold %d bytes, MaxBytes %d", i, got, limit)
				}
			}
			s := c.Stats()
			if s.ChunkBytes != c.chunkCapacity() || s.BytesMax > limit || s.BytesUsed > s.BytesMax || s.BytesLive > s.BytesUsed {
				t.Fatalf("stats %+v, chunks %d", s, c.chunkCapacity())
			}
			mustCheck(t, c)
		})
	}
}
