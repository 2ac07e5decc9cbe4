package redis

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// A cold read (L1 miss, Redis hit) sends exactly one command, a GET, and
// stores the value in L1; with an L1 of one entry every read of a walk
// through the keys is cold.
func TestColdReadSendsOneGet(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		client, cnt := b.client(t)
		src := newSource()
		const n = 50
		writer := newTier(t, client, src, nil)
		setKeys(t, writer, n)
		c := newTier(t, client, src, func(o *Options[string]) { o.Local.MaxEntries = 1 })
		waitSubscribed(t, c)
		before := cnt.n.Load()
		for i := range n {
			mustGet(t, c, fmt.Sprint("k", i), fmt.Sprint("v", i))
		}
		if d := cnt.n.Load() - before; d != n {
			t.Fatalf("%d cold reads sent %d commands, want %d (one GET each)", n, d, n)
		}
		if st := c.Stats(); st.L2Reads != n || st.L2Hits != n || st.Loads != 0 {
			t.Fatalf("stats %+v: want %d L2 reads, all hits, no loads", st, n)
		}
	})
}

// The allocations a cold read adds to the GET it sends: the flight, the L1
// record and the core cache's entry, the Redis call's context (the shared
// deadline with the Prober's context values: loading marks the key being
// probed there, so that a Prober asking for it fails with ErrReentrant),
// and for []byte values the copy of the payload that the codec gets
// (StringCodec takes the value out of the string read, without a copy). It was 11 more (12 for strings) before the
// Redis call's deadline came from a shared context and the envelope's
// compare-and-set token was computed only for a load. GETs are answered in
// memory (memGets), so the count is the client's alone.
func TestColdReadAllocs(t *testing.T) {
	t.Run("string", func(t *testing.T) { coldReadAllocs(t, "value", StringCodec{}, 4) })
	t.Run("bytes", func(t *testing.T) { coldReadAllocs(t, []byte("value"), BytesCodec{}, 5) })
}

func coldReadAllocs[V any](t *testing.T, value V, codec Codec[V], want float64) {
	srv := standalone(t)
	ctx := context.Background()
	prefix := testPrefix(t)
	mem := memGets{}
	client := goredis.NewUniversalClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}))
	client.AddHook(mem)
	t.Cleanup(func() { _ = client.Close() })
	o := Options[V]{
		Client:  client,
		Loader:  loading.LoaderFunc[string, V](func(context.Context, string) (V, error) { return value, nil }),
		Codec:   codec,
		Prefix:  prefix,
		Timeout: time.Second,
	}
	o.Local.MaxEntries = 1
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	eventually(t, 10*time.Second, "subscription confirmed", func() bool { return c.Stats().Subscribed })
	const nkeys = 4096 // more than the reads: each cold read is of a key not read before
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
		env, _ := codec.Append(newEnvelope(kindValue, 1, c.fp, time.Now().Add(time.Hour).UnixMilli(), 8), value)
		mem[prefix+keys[i]] = string(env)
		mem["raw:"+keys[i]] = "value"
	}
	i := 0
	get := testing.AllocsPerRun(1000, func() {
		i++
		if _, err := client.Get(ctx, "raw:"+keys[i%nkeys]).Result(); err != nil {
			t.Fatal(err)
		}
	})
	hits := c.Stats().L2Hits
	cold := testing.AllocsPerRun(1000, func() {
		i++
		if _, err := c.Get(ctx, keys[i%nkeys]); err != nil {
			t.Fatal(err)
		}
	})
	if d := c.Stats().L2Hits - hits; d != 1001 {
		t.Fatalf("%d L2 hits for 1001 reads: not every read was cold", d)
	}
	if cold-get > want {
		t.Fatalf("a cold read allocates %v times, a GET %v: %v more, want at most %v", cold, get, cold-get, want)
	}
	t.Logf("cold read: %v allocations, GET: %v", cold, get)
}

// callContext: a caller's earlier deadline is kept as it is; a context that
// is never cancelled gets a shared deadline, no earlier than Timeout from
// now and at most the slack later, with the caller's values; a cancellable
// one gets its own deadline and its cancellation.
func TestCallContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 100 * time.Millisecond
		c := &core{timeout: timeout, deadlines: newDeadlines(timeout)}
		slack := c.deadlines.slack
		if slack != time.Millisecond {
			t.Fatalf("slack %v, want 1ms", slack)
		}

		// An earlier deadline: ctx itself.
		early, cancelEarly := context.WithTimeout(context.Background(), timeout/2)
		defer cancelEarly()
		if got, cancel := c.callContext(early, time.Now()); got != early {
			t.Fatal("a context ending before Timeout was not used as it is")
		} else {
			cancel()
		}

		// Never cancelled: a shared deadline, with the caller's values.
		type key struct{}
		start := time.Now()
		valued := context.WithValue(context.Background(), key{}, "v")
		a, cancelA := c.callContext(valued, start)
		defer cancelA()
		b, cancelB := c.callContext(context.Background(), start)
		defer cancelB()
		if a.Value(key{}) != "v" {
			t.Fatal("the call's context lost the caller's value")
		}
		if a.Done() != b.Done() {
			t.Fatal("two calls started together do not share their deadline")
		}
		d, ok := a.Deadline()
		if !ok || d.Before(start.Add(timeout)) || d.After(start.Add(timeout+slack)) {
			t.Fatalf("deadline %v after the start, want within [%v, %v]", d.Sub(start), timeout, timeout+slack)
		}
		child, cancelChild := context.WithCancel(a) // as a client might derive
		defer cancelChild()

		time.Sleep(slack / 2)
		c2, cancel2 := c.callContext(context.Background(), time.Now())
		defer cancel2()
		if c2.Done() != b.Done() {
			t.Fatal("a call started within the slack does not share the deadline")
		}
		time.Sleep(slack)
		later := time.Now()
		c3, cancel3 := c.callContext(context.Background(), later)
		defer cancel3()
		if c3.Done() == b.Done() {
			t.Fatal("a call started after the slack shares an earlier deadline")
		}
		if d3, _ := c3.Deadline(); d3.Before(later.Add(timeout)) {
			t.Fatalf("the new shared deadline is %v after the call's start, want at least %v", d3.Sub(later), timeout)
		}

		time.Sleep(time.Until(start.Add(timeout)) - time.Nanosecond)
		synctest.Wait()
		if a.Err() != nil || child.Err() != nil {
			t.Fatal("the shared deadline ended before Timeout")
		}
		time.Sleep(slack + time.Nanosecond)
		synctest.Wait()
		if !errors.Is(a.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(a), context.DeadlineExceeded) {
			t.Fatalf("after the deadline: err %v, cause %v", a.Err(), context.Cause(a))
		}
		if child.Err() == nil {
			t.Fatal("a context derived from the call's did not end with it")
		}

		// Cancellable, no deadline: its own deadline, and its cancellation.
		parent, cancelParent := context.WithCancel(context.Background())
		own, cancelOwn := c.callContext(parent, time.Now())
		defer cancelOwn()
		if d, ok := own.Deadline(); !ok || d != time.Now().Add(timeout) {
			t.Fatalf("deadline %v, %v; want Timeout from now", d, ok)
		}
		cancelParent()
		if !errors.Is(own.Err(), context.Canceled) {
			t.Fatalf("after the caller's cancel: %v", own.Err())
		}
	})
}
