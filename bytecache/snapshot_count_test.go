package bytecache

import "testing"

// The end block's count used to be compared with the blocks' total as a
// 64-bit number while SaveTo kept the total in 32 bits: a snapshot of more
// than 2^32 entries was written with a wrapped count and refused as corrupt
// by LoadFrom. Both sides now use the total's low 32 bits. (Saving 2^32
// entries takes over 100 GB, so the rule is checked on endCount itself.)
func TestEndCountIsTotalModulo2To32(t *testing.T) {
	for _, c := range []struct {
		total uint64
		want  uint32
	}{
		{0, 0},
		{7, 7},
		{1<<32 - 1, 1<<32 - 1},
		{1 << 32, 0},
		{1<<32 + 5, 5},
		{3<<32 + 9, 9},
	} {
		if got := endCount(c.total); got != c.want {
			t.Errorf("endCount(%d) = %d, want %d", c.total, got, c.want)
		}
	}
}
