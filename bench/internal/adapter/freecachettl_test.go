package adapter

import (
	"testing"
	"time"
)

// TestFreecacheTTLRoundsUp: freecache counts whole seconds from the
// current second cut down; a TTL of 1.9 s must become 3 s, so that no entry
// expires before its time. It became 1 s (truncated), then 2 s, with which
// an entry set at x.9 s expired 1.1 s later.
func TestFreecacheTTLRoundsUp(t *testing.T) {
	for _, c := range []struct {
		ttl  time.Duration
		want int
	}{{1900 * time.Millisecond, 3}, {time.Millisecond, 2}, {2 * time.Second, 3}, {time.Hour, 3601}, {0, 0}} {
		sc, err := NewString("freecache", StringConfig[string]{Capacity: 16, TTL: c.ttl, Codec: StringCodec{}, EntryBytes: 24})
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.(*freecacheString[string]).ttl; got != c.want {
			t.Errorf("TTL %v: freecache is given %d s, want %d", c.ttl, got, c.want)
		}
		sc.Close()
	}
}
