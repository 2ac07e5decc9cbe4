package redis

import (
	"context"
	"testing"
	"time"
)

// On a plain client the invalidation is pipelined with the write, so it
// is published even when Redis refuses the write (a SET out of memory):
// InvalidationsSent counts it. It did not, so the instance received back
// more of its own invalidations (InvalidationsIgnored) than it had sent.
func TestPublishOfFailedWriteCounted(t *testing.T) {
	checkLeaks(t)
	s := private(t)
	cl, _ := backend{addrs: []string{s.Addr()}}.client(t)
	bt, _ := newByteTier(t, cl, nil)
	waitTierSubscribed(t, bt)
	ctx := context.Background()
	if err := cl.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Minute); err == nil {
		t.Fatal("Set over maxmemory succeeded; want Redis's OOM refusal")
	}
	eventually(t, 10*time.Second, "the invalidation received back", func() bool {
		return bt.Stats().InvalidationsIgnored == 1
	})
	if st := bt.Stats(); st.InvalidationsSent != 1 || st.L2WriteErrors != 1 || st.L2Writes != 0 {
		t.Errorf("InvalidationsSent %d, L2WriteErrors %d, L2Writes %d; want 1, 1, 0 (the publication went out)",
			st.InvalidationsSent, st.L2WriteErrors, st.L2Writes)
	}
}
