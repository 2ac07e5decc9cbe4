package loading

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Get and GetMany with a nil context return an error, whether or not the
// key is cached: they do not panic (Get panicked on a miss, reading the
// context's values, after the core cache had counted the miss), start no
// load and count no lookup. LimitTTL with a nil context does nothing.
func TestNilContext(t *testing.T) {
	src := newSource(nil)
	c := newCache(t, Options[int, string]{Loader: src, RefreshAfter: time.Nanosecond})
	mustGet(t, c, 1, "v1.1") // cached, and due for a refresh from now on
	before := c.Stats()

	isNilCtxErr := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "loading: nil Context") {
			t.Errorf("%s with a nil Context: error %v; want one saying \"loading: nil Context\"", what, err)
		}
	}
	var nilCtx context.Context // nil: what is tested
	noPanic(t, "Get of a missing key", func() { _, err := c.Get(nilCtx, 2); isNilCtxErr("Get of a missing key", err) })
	noPanic(t, "Get of a cached key", func() { _, err := c.Get(nilCtx, 1); isNilCtxErr("Get of a cached key", err) })
	noPanic(t, "GetMany", func() {
		m, err := c.GetMany(nilCtx, []int{1, 2, 3})
		isNilCtxErr("GetMany", err)
		if m != nil {
			t.Errorf("GetMany with a nil Context returned %v; want a nil map", m)
		}
	})
	noPanic(t, "LimitTTL", func() { LimitTTL(nilCtx, time.Second) })

	after := c.Stats()
	if after.Hits != before.Hits || after.Misses != before.Misses || after.Loads != before.Loads ||
		after.Refreshes != before.Refreshes || after.Core.Hits != before.Core.Hits || after.Core.Misses != before.Core.Misses {
		t.Errorf("the calls with a nil Context changed the stats:\nbefore %+v\nafter  %+v", before, after)
	}
	if n := src.total.Load(); n != 1 {
		t.Errorf("%d loader calls; want 1 (none for the calls with a nil Context)", n)
	}
	mustGet(t, c, 2, "v2.1") // the cache still works
}

// noPanic runs f, failing the test (instead of crashing it) if f panics.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s with a nil Context panicked: %v", what, p)
		}
	}()
	f()
}
