package redis

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// writeRefusal puts a server that holds the key prefix+"k" (value "v",
// written by a ByteTier on the admin connection) into a state where it
// refuses writes with an error reply but still answers reads, and returns
// the client to use from then on.
type writeRefusal struct {
	name  string
	apply func(t *testing.T, srv interface{ Addr() string }, admin *goredis.Client) *goredis.Client
}

func writeRefusals() []writeRefusal {
	plain := func(t *testing.T, addr string, user, pw string) *goredis.Client {
		cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{
			Addrs: []string{addr}, Username: user, Password: pw,
		}).Simple())
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	return []writeRefusal{
		{"OOM", func(t *testing.T, srv interface{ Addr() string }, admin *goredis.Client) *goredis.Client {
			// maxmemory with the default noeviction policy: every write
			// "OOM command not allowed when used memory > 'maxmemory'".
			if err := admin.ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
				t.Fatal(err)
			}
			return plain(t, srv.Addr(), "", "")
		}},
		{"READONLY", func(t *testing.T, srv interface{ Addr() string }, admin *goredis.Client) *goredis.Client {
			// A replica by mistake (of a master that never answers: it
			// keeps its data, serves reads, refuses writes).
			if err := admin.Do(context.Background(), "replicaof", "127.0.0.1", strconv.Itoa(1)).Err(); err != nil {
				t.Fatal(err)
			}
			return plain(t, srv.Addr(), "", "")
		}},
		{"NOPERM", func(t *testing.T, srv interface{ Addr() string }, admin *goredis.Client) *goredis.Client {
			// An ACL user that may read and use Pub/Sub but not SET.
			if err := admin.Do(context.Background(), "acl", "setuser", "reader", "on", ">pw", "~*", "&*", "+@all", "-set").Err(); err != nil {
				t.Fatal(err)
			}
			return plain(t, srv.Addr(), "reader", "pw")
		}},
	}
}

// A server that refuses writes with an error reply but answers reads
// (maxmemory with noeviction: OOM; a replica by mistake: READONLY; an ACL
// user without SET: NOPERM) opened the circuit breaker after
// BreakerFailures refused Sets, and then every ByteTier.Get failed at once
// with ErrUnavailable, although Redis held the value and answered reads.
// The Sets must return Redis's refusal, and Get still return the value:
// the breaker guards against a Redis that is down or slow, and a refusal
// of writes is a fast, definite answer (as a PUBLISH refused by the ACL,
// TestRefusedPublishKeepsBreakerClosed). A write's refusal is now a
// success for the breaker (writeRefused).
func TestWriteRefusalsKeepByteTierReads(t *testing.T) {
	for _, r := range writeRefusals() {
		t.Run(r.name, func(t *testing.T) {
			checkLeaks(t)
			srv := private(t)
			ctx := context.Background()
			admin := srv.Client()
			defer admin.Close()
			prefix := testPrefix(t)
			w, _ := newByteTier(t, admin, nil)
			if err := w.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
				t.Fatal(err)
			}
			cl := r.apply(t, srv, admin)
			bt, err := NewByteTier(ByteTierOptions{Client: cl, Prefix: prefix, Timeout: time.Second,
				BreakerFailures: 3, BreakerOpenFor: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer bt.Close()
			if v, _, ok, err := bt.Get(ctx, nil, []byte("k")); err != nil || !ok || string(v) != "v" {
				t.Fatalf("Get before the Sets = %q, %v, %v; want v", v, ok, err)
			}
			for i := range 3 {
				err := bt.Set(ctx, []byte("other"), []byte("x"), time.Hour)
				if err == nil || errors.Is(err, ErrUnavailable) {
					t.Fatalf("Set %d: %v; want Redis's refusal", i, err)
				}
			}
			v, _, ok, err := bt.Get(ctx, nil, []byte("k"))
			if err != nil || !ok || string(v) != "v" {
				t.Fatalf("Get after 3 Sets refused with %s = %q, %v, %v (breaker %v); want v: Redis answers reads",
					r.name, v, ok, err, bt.Stats().Breaker)
			}
		})
	}
}

// holdScripts holds every EVALSHA until release is closed.
type holdScripts struct{ release chan struct{} }

func (h holdScripts) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h holdScripts) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "evalsha" {
			<-h.release
		}
		return next(ctx, cmd)
	}
}
func (h holdScripts) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// On a Redis at maxmemory with noeviction (reads fine, writes refused
// with OOM), a Cache that only read opened its breaker: each L1 miss that
// Redis did not hold was loaded and its value queued for Redis, the
// compare-and-set script was refused, and writeLoaded reported each
// refusal to the breaker as a failure. After BreakerFailures such writes
// in a row (a GetMany of absent keys, any burst of misses), Gets of keys
// that Redis held no longer read it (L2Skipped) and went to the Loader,
// again and again while Redis stayed full. A refused write of a loaded
// value must be counted (L2WriteErrors) and dropped, and Redis go on
// serving reads.
func TestOOMRefusedLoadedWritesKeepRedisReads(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	ctx := context.Background()
	admin := srv.Client()
	defer admin.Close()
	src := newSource()
	src.set("k", "from-source")
	var keys []string
	for i := range DefaultBreakerFailures {
		keys = append(keys, "a"+strconv.Itoa(i))
		src.set(keys[i], "x")
	}
	// Another instance stored k in Redis before it filled up.
	w := newTier(t, admin, newSource(), nil)
	if err := w.Set(ctx, "k", "from-redis"); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
	t.Cleanup(func() { _ = cl.Close() })
	// The loaded values' writes wait until every read of the GetMany is
	// done, so that they fail in a row, as in a burst of misses.
	hold := holdScripts{release: make(chan struct{})}
	cl.AddHook(hold)
	c := newTier(t, cl, src, func(o *Options[string]) { o.BreakerOpenFor = time.Hour })
	if got, err := c.GetMany(ctx, keys); err != nil || len(got) != len(keys) {
		t.Fatalf("GetMany = %v, %v", got, err)
	}
	close(hold.release)
	eventually(t, 10*time.Second, "the loaded values' writes refused", func() bool {
		return c.Stats().L2WriteErrors == uint64(len(keys))
	})
	got, err := c.Get(ctx, "k")
	if st := c.Stats(); err != nil || got != "from-redis" {
		t.Fatalf("Get(k) = %q, %v (breaker %v, L2Skipped %d, L2WriteErrors %d); want %q: Redis holds it and answers reads",
			got, err, st.Breaker, st.L2Skipped, st.L2WriteErrors, "from-redis")
	}
}
