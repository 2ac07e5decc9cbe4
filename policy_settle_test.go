package cachekit

import "testing"

// The cache skips the policy's Evict while the weight is within the bound.
// SIEVE must still end the insertion of the last entry added then: a write
// that later makes a read entry heavier evicts the entry never read, not
// the one just written.
func TestSieveWriteAfterFillKeepsWrittenKey(t *testing.T) {
	c, err := New(Options[string, int]{MaxWeight: 3, Weigher: func(_ string, w int) uint32 { return uint32(w) }, Policy: "sieve"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Set("a", 1)
	c.Set("b", 1)
	c.Set("c", 1)
	c.settle()
	c.Get("a")
	c.Get("b")
	c.settle()
	c.Set("a", 2)
	c.settle()
	_, hasA := c.Peek("a")
	_, hasC := c.Peek("c")
	if !hasA || hasC {
		t.Errorf("a (read, then written) present %v, c (never read) present %v: want c evicted, not a", hasA, hasC)
	}
}
