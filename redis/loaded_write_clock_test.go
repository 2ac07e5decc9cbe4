package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// A loaded value's write carries the latest time it may still apply, which
// its script compares with the server's clock; it was taken from this
// machine's clock as it was, so with this machine's clock ahead of the
// server's a write held by a hung Redis could land after the tombstone of
// a Delete it raced had expired. It is now translated by the estimate of
// the server's clock, as a Set's bound is: here the estimate says the
// server runs a minute behind, so the write, which reaches it at once, is
// too late by its clock and writes nothing.
func TestLoadedWriteBoundedByServerClock(t *testing.T) {
	client := standaloneClient(t)
	src := newSource()
	src.set("k", "v")
	c := newTier(t, client, src, nil)
	c.clockAt("").observe(sample{off: -time.Minute.Milliseconds(), rtt: time.Millisecond})
	ctx := context.Background()
	if v, err := c.Get(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	eventually(t, 10*time.Second, "the loaded value's write ran", func() bool {
		st := c.Stats()
		return st.L2Writes+st.L2WritesDropped+st.L2WriteErrors+st.L2WritesRejected > 0
	})
	st := c.Stats()
	if st.L2Writes != 0 || st.L2WritesDropped != 1 {
		t.Fatalf("stats %+v: want the write dropped as too late by the server's clock (L2WritesDropped 1, L2Writes 0)", st)
	}
	if raw, ok := rawGet(t, client, c.prefix+"k"); ok {
		t.Fatalf("Redis holds %q for k; want nothing", raw)
	}
}

// The answer of a loaded value's write is a sample of the server's clock,
// as a Set's is: an instance that only loads has an estimate to bound its
// writes by once one has been answered.
func TestLoadedWriteSamplesServerClock(t *testing.T) {
	client := standaloneClient(t)
	src := newSource()
	src.set("k", "v")
	c := newTier(t, client, src, nil)
	now := time.Now().Add(time.Minute)
	if l, _ := c.clockAt("").latest(now, true); l != 0 {
		t.Fatalf("a new Cache has an estimate of the server's clock already (latest %d)", l)
	}
	if _, err := c.Get(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the loaded value written", func() bool { return c.Stats().L2Writes == 1 })
	l, _ := c.clockAt("").latest(now, true)
	// The server's clock is this machine's (same host): the bound is the
	// deadline, give or take the clocks' milliseconds and the round trip.
	if d := l - now.UnixMilli(); d < -1000 || d > 1000 {
		t.Fatalf("after a loaded write, the bound of a write due at %d is %d (%+d ms); want an estimate near this machine's clock", now.UnixMilli(), l, d)
	}
}

// Options.Loader is required; a nil LoaderFunc in it was accepted (the
// Cache hands loading.New its own loader, so loading's check of the same
// never ran) and every miss then failed with a recovered nil-func panic.
func TestNilLoaderFuncRefused(t *testing.T) {
	client := standaloneClient(t)
	var f loading.LoaderFunc[string, string]
	c, err := New(Options[string]{Client: client, Loader: f, Prefix: testPrefix(t)})
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("New with a nil LoaderFunc: %v; want an error wrapping ErrInvalidOptions", err)
	}
}
