package adapter

import "testing"

// TestBytecacheTinyBudget checks that bytecache is built for a capacity
// whose byte budget is below its smallest shard (1 KiB), as freecache and
// fastcache are below their minimums: cmd/memory -sizes 10 and
// cmd/articles -entries 1 failed on it after measuring every other cache.
func TestBytecacheTinyBudget(t *testing.T) {
	for _, capacity := range []int{1, 10} {
		c, err := NewString("bytecache", StringConfig[string]{Capacity: capacity, Codec: StringCodec{}, EntryBytes: 32})
		if err != nil {
			t.Fatalf("capacity %d (budget %d bytes): %v", capacity, ByteBudget(capacity, 32), err)
		}
		c.Set("key-000000000001", "val-000000000001")
		if v, ok := c.Get("key-000000000001"); !ok || v != "val-000000000001" {
			t.Errorf("capacity %d: Get = %q, %v; want the value", capacity, v, ok)
		}
		c.Close()
	}
}
