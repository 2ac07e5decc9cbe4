package redis

import (
	"context"
	"testing"
	"time"
)

// A load that read the key absent and raced another instance's Set wrote
// its old value to Redis once the Set's value had expired (a TTL shorter
// than TombstoneTTL): the compare-and-set token of an absent key is the
// same before the Set and after its value expired, and the load's write
// was bounded by TombstoneTTL alone. It is bounded by TTL too now: held
// longer than TTL less twice Timeout, it is dropped.
func TestLoadRacingSetDoesNotOutliveShortTTL(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	ca, cb := standaloneClient(t), standaloneClient(t)
	src := newSource()
	src.set("k", "old")
	src.gate = make(chan struct{})
	src.firstGate = src.gate
	src.started = make(chan string, 1)
	// A TTL shorter than TombstoneTTL (1 minute by default), as allowed.
	tweak := func(o *Options[string]) { o.TTL, o.Timeout = 2*time.Second, 300*time.Millisecond }
	a := newTier(t, ca, src, tweak)
	b := newTier(t, cb, src, tweak)
	waitSubscribed(t, a, b)

	got := make(chan string, 1)
	go func() {
		v, err := b.Get(ctx, "k")
		if err != nil {
			v = "error: " + err.Error()
		}
		got <- v
	}()
	<-src.started // B's load has read Redis (absent) and the source ("old")
	src.mu.Lock()
	src.values["k"] = "new"
	src.gate, src.started = nil, nil
	src.mu.Unlock()
	if err := a.Set(ctx, "k", "new"); err != nil {
		t.Fatal(err)
	}
	eventually(t, invalidationBound, "B receives A's invalidation", func() bool { return b.Stats().InvalidationsReceived == 1 })
	// A's value expires in Redis (its TTL), as values do.
	eventually(t, 10*time.Second, "A's value expires in Redis", func() bool {
		_, ok := rawGet(t, cb, b.prefix+"k")
		return !ok
	})
	close(src.firstGate) // B's load returns "old"
	if v := <-got; v != "old" {
		t.Fatalf("the Get that started the load got %q, want old", v)
	}
	eventually(t, 10*time.Second, "B's loaded write handled", func() bool {
		st := b.Stats()
		return st.L2Writes+st.L2WritesRejected+st.L2WritesDropped+st.L2WriteErrors == 1
	})
	if raw, ok := rawGet(t, cb, b.prefix+"k"); ok && parseEntry(raw).kind == kindValue && parseEntry(raw).payload() == "old" {
		t.Errorf("Redis holds the value B loaded before A's Set (%q): the load that raced the Set put the old value back", parseEntry(raw).payload())
	}
	for name, c := range map[string]*Cache[string]{"A": a, "B": b} {
		if v, err := c.Get(ctx, "k"); err != nil || v != "new" {
			t.Errorf("%s.Get = %q, %v; want new (the source's latest) — never the value loaded before the Set", name, v, err)
		}
	}
}
