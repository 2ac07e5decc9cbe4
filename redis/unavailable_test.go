package redis

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"
)

// A server that refuses the client's password answers every command with
// WRONGPASS: that is Redis unavailable to this client (as NOAUTH is), not
// an unreadable value. It was read as an incompatible entry: Cache.Get
// counted L2Incompatible and logged "unreadable key", ByteTier.Get
// returned a miss with no error, and the breaker never opened.
func TestWrongPasswordIsUnavailable(t *testing.T) {
	s := private(t)
	adm := s.Client()
	defer adm.Close()
	if err := adm.ConfigSet(context.Background(), "requirepass", "secret").Err(); err != nil {
		t.Fatal(err)
	}
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), Password: "wrong", ContextTimeoutEnabled: true})
	defer cl.Close()

	src := newSource()
	src.set("k", "v")
	c := newTier(t, cl, src, func(o *Options[string]) { o.BreakerFailures = 1 })
	mustGet(t, c, "k", "v") // from the Loader
	if st := c.Stats(); st.L2Incompatible != 0 || st.L2Errors != 1 || st.Breaker != BreakerOpen {
		t.Errorf("Cache after a WRONGPASS read: L2Incompatible %d, L2Errors %d, breaker %v; want 0, 1, open",
			st.L2Incompatible, st.L2Errors, st.Breaker)
	}

	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.BreakerFailures = 1 })
	_, _, found, err := bt.Get(context.Background(), nil, []byte("k"))
	if err == nil || found {
		t.Errorf("ByteTier.Get with a refused password: found %v, err %v; want an error", found, err)
	}
	if st := bt.Stats(); st.L2Incompatible != 0 || st.Breaker != BreakerOpen {
		t.Errorf("ByteTier after a WRONGPASS read: L2Incompatible %d, breaker %v; want 0, open", st.L2Incompatible, st.Breaker)
	}
}

// A master with fewer replicas than min-replicas-to-write refuses every
// write with NOREPLICAS. It counted as a success for the breaker, then
// (84f6335) as a failure, which opened the breaker after BreakerFailures
// refused Sets and failed every read, though Redis still answered reads.
// A write's refusal is now a success for the breaker, as OOM, READONLY and
// NOPERM (write_refusal_breaker_test.go): the Set fails, reads go on.
func TestNoReplicasRefusesWritesKeepsReads(t *testing.T) {
	s := private(t)
	adm := s.Client()
	defer adm.Close()
	ctx := context.Background()
	bt, _ := newByteTier(t, adm, func(o *ByteTierOptions) { o.BreakerFailures = 1 })
	if err := bt.Set(ctx, []byte("k"), []byte("v"), -1); err != nil {
		t.Fatal(err)
	}
	if err := adm.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	defer cl.Close()
	bt, _ = newByteTier(t, cl, func(o *ByteTierOptions) { o.BreakerFailures = 1 })
	for range 3 {
		if err := bt.Set(ctx, []byte("k"), []byte("w"), -1); err == nil {
			t.Fatal("Set without the replicas that min-replicas-to-write asks for succeeded")
		}
	}
	if st := bt.Stats(); st.Breaker != BreakerClosed || st.L2WriteErrors != 3 {
		t.Errorf("after 3 NOREPLICAS writes: breaker %v, L2WriteErrors %d; want closed, 3", st.Breaker, st.L2WriteErrors)
	}
	v, _, found, err := bt.Get(ctx, nil, []byte("k"))
	if err != nil || !found || string(v) != "v" {
		t.Errorf("Get after refused writes = %q, %v, %v; want the value Redis holds, v", v, found, err)
	}
}
