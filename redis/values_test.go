package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

type userV1 struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

type userV2 struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
}

// panicky is a codec whose Decode panics.
type panicky struct{ JSONCodec[userV1] }

func (panicky) Name() string                       { return "json" } // same fingerprint as JSONCodec[userV1]
func (panicky) Decode(data []byte) (userV1, error) { panic("boom") }

// A value in Redis that this cache cannot decode is a miss and a counted
// error, never a panic; the load's result then replaces it.
func TestIncompatibleValue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		client, _ := b.client(t)
		prefix := testPrefix(t)
		load := func(_ context.Context, k string) (userV2, error) { return userV2{ID: 2, Name: k}, nil }
		c2 := newTier2(t, client, prefix, load, nil)
		waitSubscribed2(t, c2)

		// A value written by the previous version of the program.
		c1, err := New(Options[userV1]{Client: client, Prefix: prefix, Timeout: time.Second,
			Loader: loading.LoaderFunc[string, userV1](func(context.Context, string) (userV1, error) { return userV1{}, nil })})
		if err != nil {
			t.Fatal(err)
		}
		defer c1.Close()
		if err := c1.Set(ctx, "old", userV1{ID: 1, Name: "old"}); err != nil {
			t.Fatal(err)
		}
		// Bytes that are not ours, a truncated envelope, a corrupt payload
		// under the right fingerprint, a key of another type.
		raw := map[string]string{
			"foreign":   "hello",
			"truncated": magic + "v1234",
			"corrupt":   string(newEnvelope(kindValue, 7, c2.fp, 0, 0)) + "{not json",
		}
		for k, v := range raw {
			if err := client.Set(ctx, prefix+k, v, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := client.HSet(ctx, prefix+"hash", "f", "v").Err(); err != nil {
			t.Fatal(err)
		}
		keys := []string{"old", "foreign", "truncated", "corrupt", "hash"}
		for _, k := range keys {
			v, err := c2.Get(ctx, k)
			if err != nil || v != (userV2{ID: 2, Name: k}) {
				t.Fatalf("Get(%s) = %+v, %v; want the loaded value", k, v, err)
			}
		}
		st := c2.Stats()
		if st.L2Incompatible != uint64(len(keys)) || st.Loads != uint64(len(keys)) || st.L2Hits != 0 {
			t.Fatalf("%d incompatible, %d loads, %d L2 hits; want %d, %d, 0", st.L2Incompatible, st.Loads, st.L2Hits, len(keys), len(keys))
		}
		// The loaded values replace the unreadable ones (not the hash).
		eventually(t, 10*time.Second, "loaded values written", func() bool { return c2.Stats().L2Writes == 4 })
		for _, k := range keys[:4] {
			raw, _ := rawGet(t, client, prefix+k)
			if e := parseEntry(raw); e.kind != kindValue || e.fp != c2.fp {
				t.Fatalf("Redis holds %q for %s, want the new value", raw, k)
			}
		}

		// A codec that panics: recovered, a miss.
		c3, err := New(Options[userV1]{Client: client, Prefix: prefix, Timeout: time.Second, Codec: panicky{},
			Loader: loading.LoaderFunc[string, userV1](func(_ context.Context, k string) (userV1, error) { return userV1{ID: 3}, nil })})
		if err != nil {
			t.Fatal(err)
		}
		defer c3.Close()
		if err := c1.Set(ctx, "p", userV1{ID: 1}); err != nil {
			t.Fatal(err)
		}
		if v, err := c3.Get(ctx, "p"); err != nil || v.ID != 3 {
			t.Fatalf("Get with a panicking codec = %+v, %v; want the loaded value", v, err)
		}
		if st := c3.Stats(); st.L2Incompatible != 1 {
			t.Fatalf("%d incompatible, want 1", st.L2Incompatible)
		}
	})
}

func newTier2(t *testing.T, client goredis.UniversalClient, prefix string, load func(context.Context, string) (userV2, error), tweak func(*Options[userV2])) *Cache[userV2] {
	t.Helper()
	o := Options[userV2]{Client: client, Prefix: prefix, Timeout: time.Second, Loader: loading.LoaderFunc[string, userV2](load)}
	if tweak != nil {
		tweak(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func waitSubscribed2(t *testing.T, c *Cache[userV2]) {
	t.Helper()
	eventually(t, 10*time.Second, "subscription confirmed", func() bool { return c.Stats().Subscribed })
}

// Set refuses a value its codec cannot encode, changing nothing.
func TestSetUnencodable(t *testing.T) {
	checkLeaks(t)
	client, _ := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	c, err := New(Options[any]{Client: client, Prefix: testPrefix(t), Timeout: time.Second,
		Loader: loading.LoaderFunc[string, any](func(context.Context, string) (any, error) { return "loaded", nil })})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Set(context.Background(), "k", func() {}); err == nil {
		t.Fatal("Set of a func with the JSON codec succeeded")
	}
	if v, err := c.Get(context.Background(), "k"); err != nil || v != "loaded" {
		t.Fatalf("Get after the refused Set = %v, %v; want the loaded value", v, err)
	}
}

// Stampede across tiers: many callers missing one key make one Redis read
// and at most one load per instance.
func TestStampedeAcrossTiers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		src := newSource()
		src.set("hot", "v")
		src.set("cold", "c")
		gate := make(chan struct{})
		src.gate = gate
		src.started = make(chan string, 2)
		var caches []*Cache[string]
		for range 2 {
			cl, _ := b.client(t)
			caches = append(caches, newTier(t, cl, src, nil))
		}
		// "hot" is in Redis already (written by a third instance);
		// "cold" is nowhere.
		cl, _ := b.client(t)
		w := newTier(t, cl, newSource(), nil)
		waitSubscribed(t, caches...)
		if err := w.Set(ctx, "hot", "v"); err != nil {
			t.Fatal(err)
		}
		// Its invalidation must not land in the middle of the stampede.
		for _, c := range caches {
			eventually(t, invalidationBound, "the writer's invalidation delivered", func() bool { return c.Stats().InvalidationsReceived == 1 })
		}
		var wg sync.WaitGroup
		errs := make(chan error, 400)
		for _, c := range caches {
			for i := range 200 {
				k := "hot"
				if i%2 == 1 {
					k = "cold"
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					if v, err := c.Get(ctx, k); err != nil || v != map[string]string{"hot": "v", "cold": "c"}[k] {
						errs <- fmt.Errorf("Get(%s) = %q, %v", k, v, err)
					}
				}()
			}
		}
		// Both instances' loads of "cold" are waiting at the source.
		<-src.started
		<-src.started
		close(gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for i, c := range caches {
			st := c.Stats()
			if st.L2Reads != 2 || st.Loads != 1 || st.L2Hits != 1 {
				t.Errorf("instance %d: %d Redis reads, %d loads, %d L2 hits; want 2 (one per key), 1, 1", i, st.L2Reads, st.Loads, st.L2Hits)
			}
		}
		if n := src.count("cold"); n != 2 {
			t.Errorf("the source was called %d times for the cold key, want 2 (one per instance)", n)
		}
	})
}

// An L2 hit lives in L1 no longer than the entry's remaining TTL in Redis,
// whether that comes from the envelope or from PTTL (ExactTTL).
func TestL2HitTTLBoundedByRedis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, exact := range []bool{false, true} {
			t.Run(fmt.Sprintf("ExactTTL=%v", exact), func(t *testing.T) {
				ctx := context.Background()
				cl, _ := b.client(t)
				clock := &fakeClock{t: time.Unix(1e9, 0)}
				src := newSource()
				c := newTier(t, cl, src, func(o *Options[string]) {
					o.TTL = time.Hour
					o.Local.TTL = time.Hour
					o.Clock = clock
					o.ExactTTL = exact
				})
				waitSubscribed(t, c)
				// Another writer stored the value with 1 minute left.
				exp := time.Now().Add(time.Minute).UnixMilli()
				env := append(newEnvelope(kindValue, 1, c.fp, exp, 1), 'v')
				if err := cl.SetArgs(ctx, c.prefix+"k", env, goredis.SetArgs{ExpireAt: time.UnixMilli(exp)}).Err(); err != nil {
					t.Fatal(err)
				}
				mustGet(t, c, "k", "v")
				clock.add(50 * time.Second)
				mustGet(t, c, "k", "v")
				if st := c.Stats(); st.L2Reads != 1 {
					t.Fatalf("%d Redis reads after 50s, want 1 (an L1 hit)", st.L2Reads)
				}
				clock.add(11 * time.Second) // past the Redis TTL as it was read
				mustGet(t, c, "k", "v")     // the real Redis TTL has not run out
				if st := c.Stats(); st.L2Reads != 2 {
					t.Fatalf("%d Redis reads after 61s, want 2 (L1 expired with the Redis TTL)", st.L2Reads)
				}
			})
		}
	})
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var _ = errors.New

// A background reload (refresh ahead) reads Redis on L1's goroutine and
// takes a value another instance wrote there, without calling the source.
func TestRefreshReadsRedis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		cl, _ := b.client(t)
		clock := &fakeClock{t: time.Unix(1e9, 0)}
		src := newSource()
		src.set("k", "v1")
		c := newTier(t, cl, src, func(o *Options[string]) {
			o.Local.TTL = time.Minute
			o.Local.RefreshAfter = 30 * time.Second
			o.Clock = clock
		})
		waitSubscribed(t, c)
		mustGet(t, c, "k", "v1")
		eventually(t, 10*time.Second, "v1 written to Redis", func() bool { return c.Stats().L2Writes == 1 })
		// Another instance's value arrives in Redis without an
		// invalidation reaching c (written behind its back).
		env, err := c.encode("v2", c.ttl)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Set(ctx, c.prefix+"k", env, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		clock.add(31 * time.Second)
		mustGet(t, c, "k", "v1") // due: served, reloaded in the background
		eventually(t, 10*time.Second, "the background reload reads Redis", func() bool { return c.Stats().L2Hits == 1 })
		eventually(t, 10*time.Second, "the reloaded value in L1", func() bool {
			v, err := c.Get(ctx, "k")
			return err == nil && v == "v2"
		})
		if n := src.count("k"); n != 1 {
			t.Fatalf("the source was called %d times, want 1", n)
		}
	})
}

// A loader of one cache that reads another (here by GetMany, which does
// not probe) gets the other's value from Redis: the probe of the outer key,
// carried in the load's context, is not taken for the inner key's.
func TestNestedReadThroughAnotherCache(t *testing.T) {
	s := standalone(t)
	cl, _ := backend{addrs: []string{s.Addr()}}.client(t)
	srcB := newSource()
	srcB.set("x", "fromSource")
	pb := testPrefix(t) + "b:"
	b := newTier(t, cl, srcB, func(o *Options[string]) { o.Prefix = pb })
	other := newTier(t, cl, newSource(), func(o *Options[string]) { o.Prefix = pb })
	if err := other.Set(context.Background(), "x", "fromRedis"); err != nil {
		t.Fatal(err)
	}
	var inner string
	a := newTier(t, cl, loading.LoaderFunc[string, string](func(ctx context.Context, k string) (string, error) {
		m, err := b.GetMany(ctx, []string{"x"})
		inner = m["x"]
		return "a:" + m["x"], err
	}), func(o *Options[string]) { o.Prefix = testPrefix(t) + "a:" })
	if v, err := a.Get(context.Background(), "k"); err != nil || v != "a:fromRedis" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if st := b.Stats(); inner != "fromRedis" || st.L2Hits != 1 || srcB.count("x") != 0 {
		t.Fatalf("the inner read got %q (L2 hits %d, source calls %d); want Redis's value", inner, st.L2Hits, srcB.count("x"))
	}
}

// A caller that gives up while its Redis read is pending is no Redis
// failure: not counted in L2Errors (the load goes on without it).
func TestCallerGivingUpIsNoRedisError(t *testing.T) {
	s := private(t)
	cl, _ := backend{addrs: []string{s.Addr()}}.client(t)
	src := newSource()
	src.set("x", "v")
	c := newTier(t, cl, src, nil)
	waitSubscribed(t, c)
	if err := cl.Do(context.Background(), "client", "pause", "300", "all").Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v; want the caller's deadline", err)
	}
	eventually(t, 10*time.Second, "the load goes on and ends", func() bool { return c.Stats().Loads == 1 })
	if st := c.Stats(); st.L2Errors != 0 {
		t.Fatalf("L2Errors = %d; the caller's own deadline is no Redis failure", st.L2Errors)
	}
}
