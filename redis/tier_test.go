package redis

import (
	"context"
	"testing"
	"time"
)

// An L1 hit sends no command to Redis; the miss before it reads Redis once
// and, after the load, writes the value there.
func TestL1HitSendsNoCommand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		client, cnt := b.client(t)
		src := newSource()
		src.set("k", "v1")
		c := newTier(t, client, src, nil)
		waitSubscribed(t, c)
		mustGet(t, c, "k", "v1")
		eventually(t, 10*time.Second, "the loaded value written to Redis", func() bool { return c.Stats().L2Writes == 1 })
		before := cnt.n.Load()
		for range 1000 {
			mustGet(t, c, "k", "v1")
		}
		if n := cnt.n.Load() - before; n != 0 {
			t.Fatalf("1000 L1 hits sent %d commands to Redis, want 0", n)
		}
		st := c.Stats()
		if st.L1Hits != 1000 || st.L2Reads != 1 || st.Loads != 1 || st.L2Misses != 1 {
			t.Fatalf("stats %+v: want 1000 L1 hits, 1 L2 read (a miss), 1 load", st)
		}
		if _, ok := rawGet(t, client, c.prefix+"k"); !ok {
			t.Fatal("the loaded value is not in Redis")
		}
	})
}

// A second instance finds the value in Redis without loading it.
func TestL2HitAcrossInstances(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ca, _ := b.client(t)
		cb, _ := b.client(t)
		src := newSource()
		src.set("k", "v1")
		a := newTier(t, ca, src, nil)
		bb := newTier(t, cb, src, nil)
		mustGet(t, a, "k", "v1")
		eventually(t, 10*time.Second, "the loaded value written to Redis", func() bool { return a.Stats().L2Writes == 1 })
		mustGet(t, bb, "k", "v1")
		if n := src.count("k"); n != 1 {
			t.Fatalf("the source was called %d times, want 1", n)
		}
		if st := bb.Stats(); st.L2Hits != 1 || st.Loads != 0 {
			t.Fatalf("second instance: %d L2 hits, %d loads; want 1, 0", st.L2Hits, st.Loads)
		}
		_ = context.Background()
	})
}

// GetMany answers from L1, Redis and the loader, key by key.
func TestGetMany(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		client, _ := b.client(t)
		src := newSource()
		for _, k := range []string{"a", "b", "c"} {
			src.set(k, "v"+k)
		}
		c := newTier(t, client, src, nil)
		mustGet(t, c, "a", "va") // in L1
		other := newTier(t, client, newSource(), nil)
		if err := other.Set(ctx, "b", "vb"); err != nil { // in Redis
			t.Fatal(err)
		}
		eventually(t, invalidationBound, "the invalidation of b delivered", func() bool { return c.Stats().InvalidationsReceived == 1 })
		got, err := c.GetMany(ctx, []string{"a", "b", "c"})
		if err != nil || len(got) != 3 || got["a"] != "va" || got["b"] != "vb" || got["c"] != "vc" {
			t.Fatalf("GetMany = %v, %v", got, err)
		}
		if st := c.Stats(); st.L2Hits != 1 || st.Loads != 2 {
			t.Fatalf("%d L2 hits, %d loads; want 1 (b), 2 (a, c)", st.L2Hits, st.Loads)
		}
	})
}
