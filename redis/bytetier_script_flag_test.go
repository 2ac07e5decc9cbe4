package redis

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// deleteScriptHold is a go-redis hook that counts the pipelines carrying a
// ByteTier's delete script (by hash or whole) and the NOSCRIPT answers
// they get, and holds the second such pipeline until release is closed,
// announcing it on entered.
type deleteScriptHold struct {
	pipes    atomic.Int32
	noscript atomic.Int32
	entered  chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (h *deleteScriptHold) DialHook(next goredis.DialHook) goredis.DialHook          { return next }
func (h *deleteScriptHold) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook { return next }
func (h *deleteScriptHold) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		isDelete := false
		for _, c := range cmds {
			if cmdName(c) == "delete" {
				isDelete = true
			}
		}
		if isDelete && h.pipes.Add(1) == 2 {
			h.once.Do(func() { close(h.entered) })
			<-h.release
		}
		err := next(ctx, cmds)
		if isDelete {
			for _, c := range cmds {
				if cmdName(c) == "delete" && c.Err() != nil && len(c.Err().Error()) >= 8 && c.Err().Error()[:8] == "NOSCRIPT" {
					h.noscript.Add(1)
				}
			}
		}
		return err
	}
}

// ByteTier.Delete publishes its invalidation in one round trip, and an
// instance that drops its copy on the message must find the new entry when
// it reads Redis (core.writeAndPublish: the invalidation must not overtake
// the write). The core had one "script has run" flag for both of a
// ByteTier's scripts: once a Set had run writeScript, the first Delete sent
// deleteScript by its hash to a server that had never seen it; Redis
// answered NOSCRIPT without deleting anything while the PUBLISH pipelined
// with it went out, so the other instance read the old value again, and
// the Delete took a second round trip and a second invalidation. Each
// script now has its own flag. (Found by a review helper.)
func TestByteTierFirstDeleteAfterSetIsOneRoundTrip(t *testing.T) {
	checkLeaks(t)
	srv := private(t) // fresh: its script cache holds neither script
	ctx := context.Background()
	clA := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
	t.Cleanup(func() { _ = clA.Close() })
	clB := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
	t.Cleanup(func() { _ = clB.Close() })
	a, _ := newByteTier(t, clA, nil)
	b, evB := newByteTier(t, clB, nil)
	waitTierSubscribed(t, a, b)

	if err := a.Set(ctx, []byte("k"), []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "B receives the Set's invalidation", func() bool {
		return b.Stats().InvalidationsReceived == 1
	})

	hold := &deleteScriptHold{entered: make(chan struct{}), release: make(chan struct{})}
	clA.AddHook(hold)
	type result struct {
		found bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		found, err := a.Delete(ctx, []byte("k"))
		done <- result{found, err}
	}()

	var staleAfterInvalidation bool
	var staleValue string
	select {
	case r := <-done:
		// One round trip, as documented: nothing further to look at.
		if r.err != nil || !r.found {
			t.Fatalf("Delete = %v, %v; want true, nil", r.found, r.err)
		}
	case <-hold.entered:
		// A second round trip of the same Delete. If B has already been
		// told that k changed, it reads Redis now, as a service would.
		eventually(t, 10*time.Second, "B receives the Delete's first invalidation", func() bool {
			return b.Stats().InvalidationsReceived == 2
		})
		v, _, found, err := b.Get(ctx, nil, []byte("k"))
		if err == nil && found {
			staleAfterInvalidation, staleValue = true, string(v)
		}
		close(hold.release)
		if r := <-done; r.err != nil || !r.found {
			t.Fatalf("Delete = %v, %v; want true, nil", r.found, r.err)
		}
	}
	if staleAfterInvalidation {
		t.Errorf("B was told that k changed (Invalidate called) before A's Delete had run: B's Get then found %q", staleValue)
	}
	if n := hold.pipes.Load(); n != 1 {
		t.Errorf("one Delete took %d round trips (%d refused with NOSCRIPT); want 1", n, hold.noscript.Load())
	}
	if st := a.Stats(); st.InvalidationsSent != st.L2Writes {
		t.Errorf("A: %d invalidations sent for %d writes (a Set and a Delete); want one each", st.InvalidationsSent, st.L2Writes)
	}
	eventually(t, 10*time.Second, "B receives every invalidation", func() bool {
		return b.Stats().InvalidationsReceived >= 2
	})
	if inv, _, _ := evB.snapshot(); len(inv) != 2 {
		t.Errorf("B's Invalidate was called %d times (%q) for one Set and one Delete; want 2", len(inv), inv)
	}
}
