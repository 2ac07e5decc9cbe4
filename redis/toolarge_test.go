package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// The tests below run a Redis whose proto-max-bulk-len is 1 MiB (its
// smallest): a longer string in a command makes it reply with a protocol
// error and close the connection, failing every command pipelined with it.
// With MaxBulkLen set to match, nothing that long is sent: the call fails
// with ErrTooLarge, counted in L2TooLarge, and Redis, the breaker and L1
// keep what they had.

const testBulkLen = 1 << 20

func smallBulkServer(t *testing.T) goredis.UniversalClient {
	t.Helper()
	srv := private(t, "--proto-max-bulk-len", "1mb")
	cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// A ByteTier stores an entry of exactly MaxBulkLen bytes (the value and its
// 28-byte header) and refuses one a byte longer without sending it.
func TestByteTierSetAtMaxBulkLen(t *testing.T) {
	checkLeaks(t)
	cl := smallBulkServer(t)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.MaxBulkLen = testBulkLen })
	ctx := context.Background()
	fits := strings.Repeat("a", testBulkLen-headerSize)
	if err := bt.Set(ctx, []byte("k"), []byte(fits), time.Hour); err != nil {
		t.Fatalf("Set of an entry of exactly MaxBulkLen bytes: %v", err)
	}
	err := bt.Set(ctx, []byte("k"), []byte(fits+"b"), time.Hour)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Set of an entry one byte over MaxBulkLen: %v; want ErrTooLarge", err)
	}
	v, _, ok, err := bt.Get(ctx, nil, []byte("k"))
	if err != nil || !ok || string(v) != fits {
		t.Fatalf("Get after the refused Set = %d bytes, %v, %v; want the first value (%d bytes)", len(v), ok, err, len(fits))
	}
	st := bt.Stats()
	if st.L2TooLarge != 1 || st.L2WriteErrors != 0 || st.L2Writes != 1 || st.Breaker != BreakerClosed {
		t.Fatalf("stats: L2TooLarge %d, L2WriteErrors %d, L2Writes %d, breaker %v; want 1, 0, 1, closed",
			st.L2TooLarge, st.L2WriteErrors, st.L2Writes, st.Breaker)
	}
}

// A key too long for Redis (with the prefix, or in its invalidation) is
// refused by Get, Set and Delete of a ByteTier, before the breaker: failing
// calls of the caller's making must not open it.
func TestByteTierKeyOverMaxBulkLen(t *testing.T) {
	checkLeaks(t)
	cl := smallBulkServer(t)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
		o.MaxBulkLen = testBulkLen
		o.BreakerFailures = 1
	})
	ctx := context.Background()
	long := []byte(strings.Repeat("k", testBulkLen))
	if _, _, _, err := bt.Get(ctx, nil, long); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Get of a %d-byte key: %v; want ErrTooLarge", len(long), err)
	}
	if err := bt.Set(ctx, long, []byte("v"), time.Hour); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Set of a %d-byte key: %v; want ErrTooLarge", len(long), err)
	}
	if _, err := bt.Delete(ctx, long); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Delete of a %d-byte key: %v; want ErrTooLarge", len(long), err)
	}
	if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
		t.Fatalf("Set of a short key after the refusals: %v", err)
	}
	st := bt.Stats()
	if st.L2TooLarge != 3 || st.BreakerOpens != 0 || st.L2Errors != 0 || st.L2WriteErrors != 0 {
		t.Fatalf("stats: L2TooLarge %d, BreakerOpens %d, L2Errors %d, L2WriteErrors %d; want 3, 0, 0, 0",
			st.L2TooLarge, st.BreakerOpens, st.L2Errors, st.L2WriteErrors)
	}
}

// A Cache's Set of a value too large for Redis returns ErrTooLarge and
// changes neither tier: this instance's L1 and another instance still read
// the previous value.
func TestCacheSetOverMaxBulkLenChangesNothing(t *testing.T) {
	checkLeaks(t)
	cl := smallBulkServer(t)
	src := newSource()
	tweak := func(o *Options[string]) { o.MaxBulkLen = testBulkLen }
	a := newTier(t, cl, src, tweak)
	b := newTier(t, cl, src, tweak)
	waitSubscribed(t, a, b)
	ctx := context.Background()
	if err := a.Set(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	err := a.Set(ctx, "k", strings.Repeat("x", testBulkLen))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Set of a value over MaxBulkLen: %v; want ErrTooLarge", err)
	}
	mustGet(t, a, "k", "v1")
	mustGet(t, b, "k", "v1")
	if err := a.Set(ctx, "k", "v2"); err != nil {
		t.Fatalf("Set after the refused one: %v", err)
	}
	st := a.Stats()
	if st.L2TooLarge != 1 || st.L2WriteErrors != 0 || st.Breaker != BreakerClosed {
		t.Fatalf("stats: L2TooLarge %d, L2WriteErrors %d, breaker %v; want 1, 0, closed", st.L2TooLarge, st.L2WriteErrors, st.Breaker)
	}
	if src.total.Load() != 0 {
		t.Fatalf("the source was called %d times; want 0", src.total.Load())
	}
}

// A loaded value too large for Redis is served and kept in L1, not written:
// the write would fail, and kill the connection of the writes pipelined
// with it.
func TestCacheLoadOverMaxBulkLenStaysInL1(t *testing.T) {
	checkLeaks(t)
	cl := smallBulkServer(t)
	src := newSource()
	big := strings.Repeat("x", testBulkLen)
	src.set("big", big)
	c := newTier(t, cl, src, func(o *Options[string]) { o.MaxBulkLen = testBulkLen })
	mustGet(t, c, "big", big)
	mustGet(t, c, "big", big) // from L1
	if n := src.count("big"); n != 1 {
		t.Fatalf("the source was called %d times; want 1", n)
	}
	if _, ok := rawGet(t, cl, testPrefix(t)+"big"); ok {
		t.Fatal("Redis holds the value over MaxBulkLen")
	}
	st := c.Stats()
	if st.L2TooLarge != 1 || st.L2WriteErrors != 0 || st.L2WritesDropped != 0 {
		t.Fatalf("stats: L2TooLarge %d, L2WriteErrors %d, L2WritesDropped %d; want 1, 0, 0", st.L2TooLarge, st.L2WriteErrors, st.L2WritesDropped)
	}
}

// A Cache's Get of a key too long for Redis loads it without reading
// Redis and keeps it in L1; Delete removes it from L1 and says that the
// other instances were not told.
func TestCacheKeyOverMaxBulkLen(t *testing.T) {
	checkLeaks(t)
	cl := smallBulkServer(t)
	src := newSource()
	long := strings.Repeat("k", testBulkLen)
	src.set(long, "v")
	c := newTier(t, cl, src, func(o *Options[string]) { o.MaxBulkLen = testBulkLen })
	mustGet(t, c, long, "v")
	mustGet(t, c, long, "v")
	if n := src.count(long); n != 1 {
		t.Fatalf("the source was called %d times; want 1 (the second Get from L1)", n)
	}
	if err := c.Delete(context.Background(), long); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Delete of a %d-byte key: %v; want ErrTooLarge", len(long), err)
	}
	src.set(long, "v2")
	mustGet(t, c, long, "v2") // L1 lost it: loaded again
	st := c.Stats()
	if st.L2TooLarge != 3 || st.L2Reads != 0 || st.L2Errors != 0 || st.L2WriteErrors != 0 {
		t.Fatalf("stats: L2TooLarge %d, L2Reads %d, L2Errors %d, L2WriteErrors %d; want 3 (2 reads, 1 Delete), 0, 0, 0",
			st.L2TooLarge, st.L2Reads, st.L2Errors, st.L2WriteErrors)
	}
}

func TestMaxBulkLenNegativeIsInvalid(t *testing.T) {
	cl := goredis.NewClient(ClientDefaults(nil).Simple())
	defer cl.Close()
	_, err := New(Options[string]{Client: cl, Loader: newSource(), MaxBulkLen: -1})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "MaxBulkLen") {
		t.Fatalf("New with MaxBulkLen -1: %v; want ErrInvalidOptions naming MaxBulkLen", err)
	}
	_, err = NewByteTier(ByteTierOptions{Client: cl, MaxBulkLen: -1})
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "MaxBulkLen") {
		t.Fatalf("NewByteTier with MaxBulkLen -1: %v; want ErrInvalidOptions naming MaxBulkLen", err)
	}
}
