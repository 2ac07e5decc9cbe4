package cachekit

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

type userID uint64
type label string

func TestKindOfKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  keyKind
		want keyKind
	}{
		{"int64", kindOfKey[int64](), keyInt64},
		{"uint64", kindOfKey[uint64](), keyInt64},
		{"int", kindOfKey[int](), map[bool]keyKind{true: keyInt64, false: keyOther}[strconv.IntSize == 64]},
		{"named uint64", kindOfKey[userID](), keyInt64},
		{"int32", kindOfKey[int32](), keyOther},
		{"string", kindOfKey[string](), keyString},
		{"named string", kindOfKey[label](), keyString},
		{"struct", kindOfKey[struct{ a, b int }](), keyOther},
		{"array", kindOfKey[[8]byte](), keyOther},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: kind %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// Sequential keys, the worst case for a weak hash, spread over the
// segments and over the home groups as random ones would: every count
// within five standard deviations of its mean.
func TestHashSpreadsSequentialKeys(t *testing.T) {
	const n = 1 << 16
	check := func(t *testing.T, hash func(i int) uint64, segShift uint) {
		t.Helper()
		segs := make([]int, 1<<(64-segShift))
		homes := make([]int, 256)
		for i := range n {
			h := hash(i)
			segs[h>>segShift]++
			homes[uint64(uint32(h))*256>>32]++
		}
		for name, counts := range map[string][]int{"segment": segs, "home": homes} {
			mean := float64(n) / float64(len(counts))
			sd := math.Sqrt(mean)
			for i, c := range counts {
				if math.Abs(float64(c)-mean) > 5*sd {
					t.Fatalf("%s %d holds %d keys, mean %.0f", name, i, c, mean)
				}
			}
		}
	}
	t.Run("int", func(t *testing.T) {
		c := ctNew(t, Options[int, int]{})
		check(t, func(i int) uint64 { return c.c.hash(i) }, c.c.segShift)
	})
	t.Run("string", func(t *testing.T) {
		c := ctNew(t, Options[string, int]{})
		check(t, func(i int) uint64 { return c.c.hash(fmt.Sprint("key-", i)) }, c.c.segShift)
	})
}

// Each cache draws its own seed: the same keys hash differently in two
// caches, so which keys collide cannot be learnt from another process.
func TestHashSeedPerCache(t *testing.T) {
	a, b := ctNew(t, Options[int, int]{}), ctNew(t, Options[int, int]{})
	same := 0
	for i := range 64 {
		if a.c.hash(i) == b.c.hash(i) {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("%d of 64 integer keys hash alike in two caches", same)
	}
}
