package redis

import (
	"context"
	"log/slog"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// Options.Logger receives failed Redis writes ([redis] issue: "failed L2
// writes are counted, logged and dropped"). A Set whose Redis write failed
// (Redis gone) was counted in L2WriteErrors and returned to the caller,
// but only the writes of loaded values were logged. (Found by a review
// helper.)
func TestFailedSetWriteIsLogged(t *testing.T) {
	srv := private(t)
	src := newSource()
	lines := &lineCounter{}
	cl := goredis.NewClient(&goredis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true, MaxRetries: 1})
	t.Cleanup(func() { _ = cl.Close() })
	c2 := newTier(t, cl, src, func(o *Options[string]) {
		o.Timeout = faultTimeout
		o.Logger = slog.New(slog.NewTextHandler(lines, nil))
	})
	waitSubscribed(t, c2)
	srv.Kill()
	err := c2.Set(context.Background(), "k", "v")
	if err == nil {
		t.Fatal("Set with Redis killed returned nil")
	}
	if st := c2.Stats(); st.L2WriteErrors != 1 {
		t.Fatalf("L2WriteErrors = %d, want 1", st.L2WriteErrors)
	}
	if n := lines.count("redis: writ"); n == 0 {
		t.Fatalf("a failed Redis write of Set (%v) was counted but not logged; log:\n%s", err, lines.buf.String())
	}
}

// An invalidation that Redis refused to publish (here an ACL without
// channels) leaves the other instances with their copies until they
// expire: the Set returns the error, and it is logged too.
func TestRefusedPublishIsLogged(t *testing.T) {
	checkLeaks(t)
	ctx := context.Background()
	cl := noPubSubClient(t, private(t))
	lines := &lineCounter{}
	c := newTier(t, cl, newSource(), func(o *Options[string]) {
		o.Logger = slog.New(slog.NewTextHandler(lines, nil))
	})
	if err := c.Set(ctx, "k", "v"); err == nil {
		t.Fatal("Set whose invalidation the ACL refused returned nil")
	}
	if st := c.Stats(); st.L2Writes != 1 || st.L2WriteErrors != 0 {
		t.Fatalf("L2Writes = %d, L2WriteErrors = %d; want 1, 0 (the write succeeded)", st.L2Writes, st.L2WriteErrors)
	}
	if n := lines.count("invalidation not published"); n != 1 {
		t.Fatalf("%d log lines about the refused invalidation, want 1; log:\n%s", n, lines.buf.String())
	}
}
