package redis

import (
	"context"
	"testing"
	"time"
)

// ByteTier.Delete keeps its tombstone for twice Timeout, so that its
// answer survives the client resending it. For a Timeout beyond about 146
// years (NewByteTier sets no upper bound) twice it overflowed, and the
// negative product was raised to a millisecond: the tombstone expired at
// once. It now saturates. (Found by a review helper.)
func TestByteTierTombstoneKeepsWithHugeTimeout(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = 1 << 62 })
	ctx := context.Background()
	if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if found, err := bt.Delete(ctx, []byte("k")); err != nil || !found {
		t.Fatalf("Delete = %v, %v; want true, nil", found, err)
	}
	// In milliseconds: go-redis's PTTL converts to a Duration, which
	// overflows for a TTL this long.
	pttl, err := cl.Do(ctx, "PTTL", bt.prefix+"k").Int64()
	if err != nil {
		t.Fatal(err)
	}
	if pttl < time.Hour.Milliseconds() {
		t.Errorf("the tombstone's PTTL after Delete with Timeout %v = %d ms; want twice Timeout (at least hours), got tombstoneKeep = %d ms",
			time.Duration(1<<62), pttl, tombstoneKeep(1<<62))
	}
}
