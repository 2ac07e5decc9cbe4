package bytecache

import (
	"math"
	"testing"
	"time"
)

// TestLenRemovesEntryExpiringAtMaxInt64 checks the expiry contract at
// the last instant a Unix nanosecond time can hold.
//
// Documented promises:
//   - Set (cache.go): "a negative ttl means it never expires, as does an
//     entry whose expiry would fall past the year 2262 (beyond Unix
//     nanoseconds)" — an expiry that does not fall past it, such as
//     math.MaxInt64 itself, is a real expiry.
//   - doc.go, Expiry: "An entry expires at the instant Set's time plus its
//     TTL and is never returned from then on ... Expired entries are
//     removed by a Get that finds them, by Delete, by Len".
//   - Len (cache.go): "Expired entries that no read has removed yet are
//     removed first"; README: "Len is exact".
//
// store.minExp uses noExpiry == math.MaxInt64 as its "no entry has a TTL"
// value, but math.MaxInt64 is also a valid expiry: an entry expiring then
// leaves minExp == noExpiry, so Len once skipped the shard (it tested
// minExp != noExpiry) and counted the entry after Get and Has had found it
// expired. Len now asks whether the shard has live entries with a TTL.
func TestLenRemovesEntryExpiringAtMaxInt64(t *testing.T) {
	clk := newClock()
	clk.ns.Store(math.MaxInt64 - 1)
	c := newCache(t, Options{MaxBytes: 1 << 20, Shards: 1, Now: clk.Now})
	set(t, c, "k", "v", time.Nanosecond) // expires at math.MaxInt64, representable
	if n := c.Len(); n != 1 {
		t.Fatalf("Len before expiry = %d, want 1", n)
	}
	clk.Advance(time.Nanosecond) // now == math.MaxInt64: the expiry instant
	if c.Has([]byte("k")) {
		t.Fatalf("Has reports the entry live at its expiry instant")
	}
	if n := c.Len(); n != 0 {
		t.Errorf("Len = %d at the expiry instant of the only entry (Has reports it absent), want 0", n)
	}
	if _, ok := get(c, "k"); ok {
		t.Errorf("Get returned an entry at its expiry instant")
	}
}
