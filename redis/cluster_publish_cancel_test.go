package redis

import (
	"context"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// cancelAfterWrite is a go-redis hook that, once armed, cancels the
// caller's context right after the pipeline holding a SET of key has been
// answered: the caller gives up (a request abandoned by its client) while
// its Set is under way, after the write has landed in Redis.
type cancelAfterWrite struct {
	key    string
	cancel atomic.Pointer[context.CancelFunc]
}

func (h *cancelAfterWrite) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *cancelAfterWrite) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *cancelAfterWrite) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if cmdName(c) == "set" && cmdKey(c) == h.key && c.Err() == nil {
				if cancel := h.cancel.Swap(nil); cancel != nil {
					(*cancel)()
				}
			}
		}
		return err
	}
}

// On a cluster the invalidation is published by a second call, after the
// write's answer, and it used the caller's context: cancelled once the SET
// had landed (a client hanging up), go-redis refused to start the SPUBLISH,
// and the other instances kept the old value in L1 for up to Local.TTL. A
// write that landed is now published whatever the caller's cancellation,
// within the call's deadline.
func TestClusterPublishSurvivesCallerCancel(t *testing.T) {
	cl := cluster(t)
	prefix := testPrefix(t)
	bg := context.Background()
	h := &cancelAfterWrite{key: prefix + "k"}
	ca := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true, MaxRetries: 1})
	ca.AddHook(h)
	t.Cleanup(func() { _ = ca.Close() })
	cb, _ := backend{addrs: cl.Addrs()}.client(t)
	src := newSource()
	src.set("k", "v1")
	tweak := func(o *Options[string]) { o.Prefix = prefix }
	a := newTier(t, ca, src, tweak)
	b := newTier(t, cb, src, tweak)
	waitSubscribed(t, a, b)
	mustGet(t, b, "k", "v1") // B's L1 holds v1

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	h.cancel.Store(&cancel)
	err := a.Set(ctx, "k", "v2")
	t.Logf("Set with a context cancelled after its write landed: %v", err)

	// The write landed: a fresh instance reads v2 from Redis.
	c := newTier(t, cb, src, tweak)
	mustGet(t, c, "k", "v2")

	// A later Set of another key by the same instance is published after
	// the first one's would have been: once B has applied it, B has
	// applied every invalidation A published before.
	if err := a.Set(bg, "other", "x"); err != nil {
		t.Fatal(err)
	}
	eventually(t, invalidationBound, "B receives A's later invalidation", func() bool { return b.Stats().InvalidationsReceived >= 1 })
	if got, err := b.Get(bg, "k"); err != nil || got != "v2" {
		t.Fatalf("B.Get(k) = %q, %v after A's Set of v2 landed in Redis; want v2 (A published %d invalidations for 2 successful writes, B received %d): "+
			"B's L1 keeps the old value with no invalidation to drop it",
			got, err, a.Stats().InvalidationsSent, b.Stats().InvalidationsReceived)
	}
}
