package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// A Get in the same instance that misses L1 while Delete's tombstone is on
// its way reads the old value from Redis; it must not stay in L1 (this
// instance ignores its own invalidation) once Delete has returned.
func TestDeleteRacingLocalGet(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		cl, _ := b.client(t)
		c := newTier(t, cl, newSource(), nil) // the source has no value: a real miss is ErrNotFound
		waitSubscribed(t, c)
		ctx := context.Background()
		if err := c.Set(ctx, "k", "old"); err != nil {
			t.Fatal(err)
		}
		hold := newPipeHold("set")
		cl.AddHook(hold)
		done := make(chan error)
		go func() { done <- c.Delete(ctx, "k") }()
		<-hold.entered // Delete has emptied L1; its tombstone is held
		if v, err := c.Get(ctx, "k"); err != nil || v != "old" {
			t.Fatalf("Get during Delete = %q, %v; want the old value from Redis", v, err)
		}
		close(hold.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if v, err := c.Get(ctx, "k"); !errors.Is(err, loading.ErrNotFound) {
			t.Fatalf("Get after Delete returned = %q, %v (Local hits %d); want not found", v, err, c.Stats().Local.Hits)
		}
	})
}

// The same window in Set: L1 is flushed (as on a resubscription) while
// Set's Redis write is on its way, and a Get reads the old value from
// Redis; once Set has returned, Get must return the new value.
func TestSetRacingLocalGetAfterFlush(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		cl, _ := b.client(t)
		c := newTier(t, cl, newSource(), nil)
		waitSubscribed(t, c)
		ctx := context.Background()
		if err := c.Set(ctx, "k", "old"); err != nil {
			t.Fatal(err)
		}
		hold := newPipeHold("set")
		cl.AddHook(hold)
		done := make(chan error)
		go func() { done <- c.Set(ctx, "k", "new") }()
		<-hold.entered
		c.flushLocal() // what confirmFlush and the degraded timer do
		if v, err := c.Get(ctx, "k"); err != nil || v != "old" {
			t.Fatalf("Get during Set = %q, %v; want the old value from Redis", v, err)
		}
		close(hold.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mustGet(t, c, "k", "new")
	})
}

// A Set that no read races keeps its value in L1: the next Get is an L1
// hit, without a Redis read.
func TestSetKeepsValueInL1(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	c := newTier(t, cl, newSource(), nil)
	if err := c.Set(context.Background(), "k", "v"); err != nil {
		t.Fatal(err)
	}
	mustGet(t, c, "k", "v")
	if st := c.Stats(); st.L1Hits != 1 || st.L2Reads != 0 {
		t.Fatalf("after Set, Get: L1 hits %d, Redis reads %d; want 1, 0", st.L1Hits, st.L2Reads)
	}
}

// A Set waiting for an earlier Set of its key in this instance gives up
// when its context ends, changing nothing.
func TestSetWaitHonoursContext(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	c := newTier(t, cl, newSource(), func(o *Options[string]) { o.Timeout = 10 * time.Second; o.TombstoneTTL = time.Minute })
	waitSubscribed(t, c)
	hold := newPipeHold("set")
	cl.AddHook(hold)
	first := make(chan error)
	go func() { first <- c.Set(context.Background(), "k", "a") }()
	<-hold.entered // the first Set's write is slow
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	second := make(chan error)
	go func() { second <- c.Set(ctx, "k", "b") }()
	select {
	case err := <-second:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("second Set returned %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second): // generous: the context ends after 50ms
		t.Errorf("Set with a 50ms context still waiting after 5s")
		defer func() { <-second }()
	}
	close(hold.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	mustGet(t, c, "k", "a")
}

// After Close, Set and Delete return ErrClosed and write nothing.
func TestCacheWritesAfterClose(t *testing.T) {
	checkLeaks(t)
	s := standalone(t)
	b := backend{name: "standalone", addrs: []string{s.Addr()}}
	cl, _ := b.client(t)
	c := newTier(t, cl, newSource(), nil)
	c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v"); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v, want ErrClosed", err)
	}
	if err := c.Delete(ctx, "k"); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close: %v, want ErrClosed", err)
	}
	if _, inRedis := rawGet(t, cl, testPrefix(t)+"k"); inRedis {
		t.Fatal("written to Redis after Close")
	}
}

// Close waits for a Set in flight: nothing reaches Redis after Close has
// returned.
func TestCacheCloseWaitsForSet(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	c := newTier(t, cl, newSource(), func(o *Options[string]) { o.Timeout = 10 * time.Second; o.TombstoneTTL = time.Minute })
	hold := newPipeHold("set")
	cl.AddHook(hold)
	done := make(chan error)
	go func() { done <- c.Set(context.Background(), "k", "v") }()
	<-hold.entered
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	eventually(t, 10*time.Second, "Close has begun", func() bool {
		return errors.Is(c.Delete(context.Background(), "other"), ErrClosed)
	})
	select {
	case <-closed:
		t.Fatal("Close returned while a Set was writing")
	default:
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-closed
	if v, ok := rawGet(t, cl, testPrefix(t)+"k"); !ok || parseEntry(v).kind != kindValue {
		t.Fatalf("the Set in flight did not write: %q, %v", v, ok)
	}
}

// A codec whose Append does not extend dst (it returns a fresh slice) is
// an error of Set, and of the write of a loaded value, not a panic (which
// would end the program on a writer goroutine) nor a garbled entry.
func TestCodecNotAppendingToDst(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	src := newSource()
	src.set("k", "a value longer than the envelope's header, which is 28 bytes")
	c, err := New(Options[string]{Client: cl, Loader: src, Prefix: testPrefix(t), Codec: sloppyCodec{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, v := range []string{"v", "a value longer than the envelope's header, which is 28 bytes"} {
		if err := c.Set(context.Background(), "k", v); !errors.Is(err, errCodecDst) {
			t.Errorf("Set(%q) with a codec that ignores dst: %v, want errCodecDst", v, err)
		}
	}
	mustGet(t, c, "k", "a value longer than the envelope's header, which is 28 bytes") // loaded: its write fails to encode
	if st := c.Stats(); st.L2WriteErrors != 1 {
		t.Errorf("L2WriteErrors %d after a load, want 1 (its encoding)", st.L2WriteErrors)
	}
	if _, inRedis := rawGet(t, cl, testPrefix(t)+"k"); inRedis {
		t.Fatal("written to Redis")
	}
}
