package redis

import (
	"testing"
	"time"
)

// A client hook that panics on a writer goroutine tells nothing about
// Redis (breaker.neutral: "its caller gave up first, or it panicked"): the
// write is counted as failed, but the breaker must not count it, or a buggy
// hook would open it in front of a healthy Redis (every Set then failing
// with ErrUnavailable, every read skipping Redis).
func TestWriterPanicDoesNotOpenBreaker(t *testing.T) {
	checkLeaks(t)
	client := standaloneClient(t)
	h := &cmdPanicHook{names: []string{"evalsha", "eval"}}
	client.AddHook(h)
	src := newSource()
	src.set("a", "va")
	c := newTier(t, client, src, func(o *Options[string]) { o.BreakerFailures = 1 })
	waitSubscribed(t, c)
	h.armed.Store(true)
	mustGet(t, c, "a", "va") // loaded; its write to Redis panics
	// The write is counted after the breaker has heard of it.
	eventually(t, 10*time.Second, "the write counted as failed", func() bool { return c.Stats().L2WriteErrors == 1 })
	if h.panics.Load() == 0 {
		t.Fatal("the hook never panicked")
	}
	if st := c.Stats(); st.Breaker != BreakerClosed || st.BreakerOpens != 0 {
		t.Fatalf("breaker %v after %d opens: a panicking hook opened it", st.Breaker, st.BreakerOpens)
	}
}
