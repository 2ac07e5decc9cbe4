package adapter

import (
	"strconv"
	"testing"
)

// TestByteBudgets pins what docs/benchmarks/README.md says of the byte
// caches' sizing: freecache, fastcache and bytecache are bounded by
// ByteBudget (freecache and fastcache raised to their minimums), while
// bigcache gets no byte bound and keeps every entry however many are
// written.
func TestByteBudgets(t *testing.T) {
	const (
		capacity   = 2000
		entryBytes = 24
		written    = 40 * capacity
	)
	held := map[string]int{}
	for _, name := range []string{"bigcache", "freecache", "fastcache", "bytecache"} {
		c, err := NewString(name, StringConfig[string]{Capacity: capacity, Codec: StringCodec{}, EntryBytes: entryBytes})
		if err != nil {
			t.Fatal(err)
		}
		for i := range written {
			k := "key-" + strconv.Itoa(1_000_000+i) // 11 bytes
			c.Set(k, "val-"+k[4:])                  // 11 bytes
		}
		n, _ := Len(c)
		c.Close()
		held[name] = n
	}
	t.Logf("held of %d written (budget %d bytes): %v", written, ByteBudget(capacity, entryBytes), held)
	if held["bigcache"] != written {
		t.Errorf("bigcache held %d of %d entries; the README says it has no byte bound", held["bigcache"], written)
	}
	// freecache's minimum is 512 KiB, fastcache's 32 MiB, both above this
	// budget: freecache holds more entries than the budget has bytes for
	// (but not all), fastcache, whose minimum fits every entry, all.
	budgetHolds := ByteBudget(capacity, entryBytes) / entryBytes
	if held["freecache"] <= budgetHolds || held["freecache"] >= written {
		t.Errorf("freecache held %d of %d entries; want more than the budget's %d (its 512 KiB minimum)", held["freecache"], written, budgetHolds)
	}
	if held["fastcache"] != written {
		t.Errorf("fastcache held %d of %d entries; want all (its 32 MiB minimum)", held["fastcache"], written)
	}
	// bytecache keeps to the budget: at most the budget's worth of
	// entries, each taking at least its own bytes.
	if held["bytecache"] > budgetHolds {
		t.Errorf("bytecache held %d of %d entries; want at most %d for its budget", held["bytecache"], written, budgetHolds)
	}
}
