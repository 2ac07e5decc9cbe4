package redis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/redis/internal/redistest"
	"github.com/cachekit/cachekit/service"
	goredis "github.com/redis/go-redis/v9"
)

// A ByteTier is the service's second tier. (Asserted here rather than in
// bytetier.go so that programs using only the typed cache do not link the
// HTTP service.)
var _ service.Tier = (*ByteTier)(nil)

// events records what a ByteTier's handlers receive.
type events struct {
	mu          sync.Mutex
	invalidated []string
	lost        int
	flushes     int
}

func (e *events) handlers() Handlers {
	return Handlers{
		Invalidate: func(key []byte) {
			e.mu.Lock()
			e.invalidated = append(e.invalidated, string(key))
			e.mu.Unlock()
		},
		Lost:  func() { e.mu.Lock(); e.lost++; e.mu.Unlock() },
		Flush: func() { e.mu.Lock(); e.flushes++; e.mu.Unlock() },
	}
}

func (e *events) snapshot() (invalidated []string, lost, flushes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.invalidated...), e.lost, e.flushes
}

// newByteTier returns a ByteTier on client with the test's prefix (shared
// by every tier of the test), recording its events, closed when the test
// ends.
func newByteTier(t *testing.T, client goredis.UniversalClient, tweak func(*ByteTierOptions)) (*ByteTier, *events) {
	t.Helper()
	o := ByteTierOptions{Client: client, Prefix: testPrefix(t), Timeout: time.Second}
	if tweak != nil {
		tweak(&o)
	}
	bt, err := NewByteTier(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bt.Close)
	ev := &events{}
	bt.SetHandlers(ev.handlers())
	return bt, ev
}

func waitTierSubscribed(t *testing.T, tiers ...*ByteTier) {
	t.Helper()
	for _, bt := range tiers {
		eventually(t, 10*time.Second, "subscription confirmed", func() bool { return bt.Stats().Subscribed })
	}
}

// Get appends to dst and returns the remaining TTL; Set without expiry;
// Delete reports whether the key was there; binary keys; a zero TTL is an
// error.
func TestByteTierRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		client, _ := b.client(t)
		bt, _ := newByteTier(t, client, nil)
		key := []byte("k\x00\xff/ü")

		if v, ttl, ok, err := bt.Get(ctx, []byte("dst:"), key); err != nil || ok || string(v) != "dst:" || ttl != 0 {
			t.Fatalf("Get of a missing key = %q, %v, %v, %v", v, ttl, ok, err)
		}
		if err := bt.Set(ctx, key, []byte("value\x00"), 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		v, ttl, ok, err := bt.Get(ctx, []byte("dst:"), key)
		if err != nil || !ok || string(v) != "dst:value\x00" {
			t.Fatalf("Get = %q, %v, %v; want dst:value\\x00", v, ok, err)
		}
		if ttl <= 9*time.Minute || ttl > 10*time.Minute {
			t.Fatalf("Get's TTL %v, want just under 10m", ttl)
		}
		// Redis expires the key when the envelope says (PXAT, to the ms).
		pttl, err := client.PTTL(ctx, bt.prefix+string(key)).Result()
		if err != nil || pttl <= 9*time.Minute || pttl > 10*time.Minute {
			t.Fatalf("PTTL in Redis = %v, %v; want just under 10m", pttl, err)
		}

		// A short TTL expires in Redis.
		if err := bt.Set(ctx, []byte("short"), []byte("x"), 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the short entry expired", func() bool {
			_, _, ok, err := bt.Get(ctx, nil, []byte("short"))
			return err == nil && !ok
		})

		// No expiry, overwriting.
		if err := bt.Set(ctx, key, []byte("forever"), -1); err != nil {
			t.Fatal(err)
		}
		if v, ttl, ok, err := bt.Get(ctx, nil, key); err != nil || !ok || string(v) != "forever" || ttl != 0 {
			t.Fatalf("Get = %q, %v, %v, %v; want forever with TTL 0 (none)", v, ttl, ok, err)
		}
		if pttl, err := client.PTTL(ctx, bt.prefix+string(key)).Result(); err != nil || pttl != -1 {
			t.Fatalf("PTTL in Redis = %v, %v; want -1 (none)", pttl, err)
		}
		if err := bt.Set(ctx, key, []byte("x"), 0); err == nil {
			t.Fatal("Set with a zero TTL: no error")
		}

		if found, err := bt.Delete(ctx, key); err != nil || !found {
			t.Fatalf("Delete = %v, %v; want true", found, err)
		}
		if _, _, ok, err := bt.Get(ctx, nil, key); err != nil || ok {
			t.Fatalf("Get after Delete: found %v, %v", ok, err)
		}
		if found, err := bt.Delete(ctx, key); err != nil || found {
			t.Fatalf("second Delete = %v, %v; want false", found, err)
		}

		// Something else under a key: a miss, counted, never an error.
		if err := client.Set(ctx, bt.prefix+"foreign", "plain", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := client.LPush(ctx, bt.prefix+"list", "x").Err(); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"foreign", "list"} {
			if _, _, ok, err := bt.Get(ctx, nil, []byte(k)); err != nil || ok {
				t.Fatalf("Get(%s) = found %v, %v; want a miss", k, ok, err)
			}
		}
		st := bt.Stats()
		if st.L2Incompatible != 2 || st.L2Writes != 5 || st.InvalidationsSent != 5 {
			t.Fatalf("stats %+v: want 2 incompatible, 5 writes and invalidations sent", st)
		}
	})
}

// A Set or Delete on A reaches B's Invalidate handler, not A's own.
func TestByteTierInvalidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		ca, _ := b.client(t)
		cb, _ := b.client(t)
		a, evA := newByteTier(t, ca, nil)
		bb, evB := newByteTier(t, cb, nil)
		waitTierSubscribed(t, a, bb)
		if a.ID() == bb.ID() {
			t.Fatal("two tiers share an instance id")
		}

		if err := a.Set(ctx, []byte("k1"), []byte("v"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Delete(ctx, []byte("k2\x00")); err != nil {
			t.Fatal(err)
		}
		eventually(t, invalidationBound, "B receives both invalidations", func() bool {
			inv, _, _ := evB.snapshot()
			return len(inv) == 2
		})
		if inv, _, _ := evB.snapshot(); inv[0] != "k1" || inv[1] != "k2\x00" {
			t.Fatalf("B invalidated %q, want k1, k2\\x00", inv)
		}
		// A has received its own two messages back and ignored them.
		eventually(t, invalidationBound, "A receives its own messages", func() bool { return a.Stats().InvalidationsIgnored == 2 })
		if inv, _, _ := evA.snapshot(); len(inv) != 0 {
			t.Fatalf("A's handler got its own invalidations %q", inv)
		}
		// And the other way round.
		if err := bb.Set(ctx, []byte("k3"), []byte("v"), -1); err != nil {
			t.Fatal(err)
		}
		eventually(t, invalidationBound, "A receives B's invalidation", func() bool {
			inv, _, _ := evA.snapshot()
			return len(inv) == 1 && inv[0] == "k3"
		})
		sa, sb := a.Stats(), bb.Stats()
		if sa.InvalidationsSent != 2 || sb.InvalidationsReceived != 2 || sb.InvalidationsSent != 1 || sa.InvalidationsReceived != 1 {
			t.Fatalf("A %+v\nB %+v", sa, sb)
		}
		if _, lost, flushes := evB.snapshot(); lost != 0 || flushes != 0 {
			t.Fatalf("B: %d losses, %d flushes on a healthy Redis", lost, flushes)
		}
	})
}

// A lost subscription calls Lost, caps the TTLs Get reports to
// DegradedTTL, and calls Flush DegradedTTL later; a subscription back
// after a loss calls Flush at once.
func TestByteTierSubscriptionLost(t *testing.T) {
	killPubSub := func(t *testing.T, b backend) {
		t.Helper()
		killed := 0
		for _, addr := range b.nodes {
			cl := goredis.NewClient(&goredis.Options{Addr: addr})
			n, err := cl.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Result()
			_ = cl.Close()
			if err != nil {
				t.Fatal(err)
			}
			killed += int(n)
		}
		if killed < 1 {
			t.Fatal("CLIENT KILL TYPE pubsub killed no connection")
		}
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		t.Run("stays lost", func(t *testing.T) {
			ctx := context.Background()
			client, _ := b.client(t)
			const degraded = 300 * time.Millisecond
			bt, ev := newByteTier(t, client, func(o *ByteTierOptions) {
				o.DegradedTTL = degraded
				o.ResubscribeDelay = time.Hour // Close interrupts the pause
			})
			waitTierSubscribed(t, bt)
			if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Hour); err != nil {
				t.Fatal(err)
			}
			killPubSub(t, b)
			eventually(t, 10*time.Second, "Lost called", func() bool { _, lost, _ := ev.snapshot(); return lost == 1 })
			if _, ttl, ok, err := bt.Get(ctx, nil, []byte("k")); err != nil || !ok || ttl <= 0 || ttl > degraded {
				t.Fatalf("Get while unsubscribed: TTL %v, %v, %v; want in (0, %v]", ttl, ok, err, degraded)
			}
			eventually(t, 10*time.Second, "Flush called DegradedTTL after the loss", func() bool { _, _, f := ev.snapshot(); return f == 1 })
			if st := bt.Stats(); st.Subscribed || st.SubscriptionLosses != 1 || st.Flushes != 1 {
				t.Fatalf("stats %+v: want unsubscribed, 1 loss, 1 flush", st)
			}
		})
		t.Run("comes back", func(t *testing.T) {
			client, _ := b.client(t)
			bt, ev := newByteTier(t, client, func(o *ByteTierOptions) {
				o.DegradedTTL = time.Hour
				o.ResubscribeDelay = 10 * time.Millisecond
			})
			waitTierSubscribed(t, bt)
			killPubSub(t, b)
			eventually(t, 10*time.Second, "subscribed again", func() bool {
				st := bt.Stats()
				return st.Subscribed && st.SubscriptionLosses == 1 && st.Subscriptions == 2
			})
			if _, lost, flushes := ev.snapshot(); lost != 1 || flushes != 1 {
				t.Fatalf("%d Lost, %d Flush calls; want 1, 1", lost, flushes)
			}
		})
	})
}

// Redis down (killed, or a black hole that never answers): every call
// fails within the deadline, the breaker opens and calls then fail at once
// with ErrUnavailable; after a restart the tier recovers by itself.
func TestByteTierRedisDown(t *testing.T) {
	tier := func(t *testing.T, addr string) *ByteTier {
		// go-redis's own timeouts are 10s: only the tier's deadline keeps
		// the calls short.
		cl := goredis.NewClient(&goredis.Options{
			Addr: addr, ContextTimeoutEnabled: true, MaxRetries: 1,
			DialTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		})
		t.Cleanup(func() { _ = cl.Close() })
		bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) {
			o.Timeout = faultTimeout
			o.BreakerFailures = 3
			o.BreakerOpenFor = time.Hour // stays open: the test sees ErrUnavailable
			o.ResubscribeDelay = 10 * time.Millisecond
		})
		return bt
	}
	calls := func(t *testing.T, bt *ByteTier) {
		t.Helper()
		ctx := context.Background()
		for i := range 10 {
			start := time.Now()
			var err error
			switch i % 3 {
			case 0:
				_, _, _, err = bt.Get(ctx, nil, []byte("k"))
			case 1:
				err = bt.Set(ctx, []byte("k"), []byte("v"), time.Minute)
			case 2:
				_, err = bt.Delete(ctx, []byte("k"))
			}
			if d := time.Since(start); err == nil || d > missBound {
				t.Fatalf("call %d with Redis down: %v after %v; want an error within %v", i, err, d, missBound)
			}
			if i >= 3 && !errors.Is(err, ErrUnavailable) {
				t.Fatalf("call %d: %v; want ErrUnavailable (the breaker open after 3 failures)", i, err)
			}
		}
		if st := bt.Stats(); st.Breaker != BreakerOpen || st.BreakerOpens != 1 || st.L2Skipped != 7 {
			t.Fatalf("stats %+v: want the breaker open, 7 calls skipped", st)
		}
	}
	t.Run("killed", func(t *testing.T) {
		checkLeaks(t)
		srv := private(t)
		bt := tier(t, srv.Addr())
		waitTierSubscribed(t, bt)
		if err := bt.Set(context.Background(), []byte("k"), []byte("v"), time.Minute); err != nil {
			t.Fatal(err)
		}
		srv.Kill()
		calls(t, bt)
	})
	t.Run("black hole", func(t *testing.T) {
		checkLeaks(t)
		bh, err := redistest.NewBlackHole()
		if err != nil {
			t.Fatal(err)
		}
		bt := tier(t, bh.Addr())
		// Closed before the tier: a subscription stuck in go-redis's
		// connection handshake (HELLO, bounded by the client's 10s read
		// timeout, not by the tier's) is released at once.
		t.Cleanup(bh.Close)
		calls(t, bt)
	})
	t.Run("restarted", func(t *testing.T) {
		checkLeaks(t)
		srv := private(t)
		cl := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
		t.Cleanup(func() { _ = cl.Close() })
		bt, ev := newByteTier(t, cl, func(o *ByteTierOptions) {
			o.Timeout = faultTimeout
			o.BreakerOpenFor = 20 * time.Millisecond
			o.ResubscribeDelay = 10 * time.Millisecond
		})
		waitTierSubscribed(t, bt)
		if err := srv.Restart(); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		eventually(t, 20*time.Second, "writes reach the restarted Redis", func() bool {
			return bt.Set(ctx, []byte("k"), []byte("v2"), time.Minute) == nil
		})
		eventually(t, 20*time.Second, "the subscription back, the caller told to flush", func() bool {
			_, lost, flushes := ev.snapshot()
			return bt.Stats().Subscribed && lost >= 1 && flushes >= 1
		})
		if v, _, ok, err := bt.Get(ctx, nil, []byte("k")); err != nil || !ok || string(v) != "v2" {
			t.Fatalf("Get after the restart = %q, %v, %v", v, ok, err)
		}
	})
}

// Bad options are refused with ErrInvalidOptions; after Close the methods
// return ErrClosed and Close is idempotent.
func TestByteTierOptionsAndClose(t *testing.T) {
	checkLeaks(t)
	ok := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer ok.Close()
	noCtx := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer noCtx.Close()
	for name, o := range map[string]ByteTierOptions{
		"no client":        {},
		"no ctx timeouts":  {Client: noCtx},
		"negative timeout": {Client: ok, Timeout: -1},
		"negative TTL":     {Client: ok, DegradedTTL: -1},
		"negative breaker": {Client: ok, BreakerFailures: -1},
		"bad sharding":     {Client: ok, Sharded: 9},
		// Timers this short would keep a core busy.
		"1ns degraded TTL":        {Client: ok, DegradedTTL: 1},
		"1ns health check":        {Client: ok, HealthCheck: time.Nanosecond},
		"999µs resubscribe delay": {Client: ok, ResubscribeDelay: MinPeriod - 1},
	} {
		if _, err := NewByteTier(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err %v, want ErrInvalidOptions", name, err)
		}
	}
	bt, err := NewByteTier(ByteTierOptions{Client: ok, Timeout: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	bt.Close()
	bt.Close()
	ctx := context.Background()
	if _, _, _, err := bt.Get(ctx, nil, []byte("k")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if err := bt.Set(ctx, []byte("k"), nil, -1); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v", err)
	}
	if _, err := bt.Delete(ctx, []byte("k")); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close: %v", err)
	}
}

// Two cachekit service instances share entries through one Redis: a PUT
// on A is found by a GET on B (through the tier), and after a DELETE or an
// update on A, B's in-memory copy is dropped within a bound.
func TestByteTierServices(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		a := startService(t, b)
		bb := startService(t, b)
		waitTierSubscribed(t, a.tier, bb.tier)

		if code, _ := a.do(t, "PUT", "/v1/entries/greeting?ttl=10m", "hello"); code != http.StatusNoContent {
			t.Fatalf("PUT on A: %d", code)
		}
		// The PUT's invalidation reaches B asynchronously: arriving after
		// B's GET below, it would drop the copy that GET keeps, and the
		// second GET would ask the tier again (seen with Redis Cluster).
		eventually(t, invalidationBound, "A's invalidation delivered to B", func() bool {
			return bb.tier.Stats().InvalidationsReceived == 1
		})
		if code, body := bb.do(t, "GET", "/v1/entries/greeting", ""); code != http.StatusOK || body != "hello" {
			t.Fatalf("GET on B: %d %q; want 200 hello (from the tier)", code, body)
		}
		if st := bb.tier.Stats(); st.L2Hits != 1 {
			t.Fatalf("B's tier: %d hits, want 1", st.L2Hits)
		}
		// B now holds it in memory: a second GET does not ask the tier.
		if code, _ := bb.do(t, "GET", "/v1/entries/greeting", ""); code != http.StatusOK || bb.tier.Stats().L2Reads != 1 {
			t.Fatalf("second GET on B: %d, %d tier reads; want 200 from memory", code, bb.tier.Stats().L2Reads)
		}

		// An update on A: B serves the new value within the bound.
		if code, _ := a.do(t, "PUT", "/v1/entries/greeting", "bonjour"); code != http.StatusNoContent {
			t.Fatalf("PUT on A: %d", code)
		}
		eventually(t, invalidationBound, "B serves A's update", func() bool {
			code, body := bb.do(t, "GET", "/v1/entries/greeting", "")
			return code == http.StatusOK && body == "bonjour"
		})

		// A delete on A: B answers 404 within the bound.
		if code, _ := a.do(t, "DELETE", "/v1/entries/greeting", ""); code != http.StatusNoContent {
			t.Fatalf("DELETE on A: %d", code)
		}
		eventually(t, invalidationBound, "B's GET answers 404 after A's DELETE", func() bool {
			code, _ := bb.do(t, "GET", "/v1/entries/greeting", "")
			return code == http.StatusNotFound
		})
		if st := bb.tier.Stats(); st.InvalidationsReceived != 3 {
			t.Fatalf("B received %d invalidations, want 3 (two PUTs, a DELETE)", st.InvalidationsReceived)
		}
	})
}

// serviceInstance is a cachekit service instance on 127.0.0.1:0 whose second tier
// is a ByteTier.
type serviceInstance struct {
	url  string
	tier *ByteTier
}

func startService(t *testing.T, b backend) *serviceInstance {
	t.Helper()
	client, _ := b.client(t)
	tier, _ := newByteTier(t, client, nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := service.New(service.Options{MaxBytes: 4 << 20, MaxValueBytes: 1024, Tier: tier, TierTimeout: 2 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	tier.SetHandlers(Handlers{
		Invalidate: func(key []byte) { srv.Invalidate(key) },
		Flush:      srv.InvalidateAll,
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		tier.Close() // before the store: no handler runs on a closed store
		_ = srv.Close()
	})
	return &serviceInstance{url: "http://" + ln.Addr().String(), tier: tier}
}

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

func (s *serviceInstance) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "text/plain")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(fmt.Errorf("%s %s: %w", method, path, err))
	}
	return resp.StatusCode, buf.String()
}

// holdGetReply holds the reply of the next GET, once armed, until release.
type holdGetReply struct {
	armed            atomic.Bool
	entered, release chan struct{}
}

func (h *holdGetReply) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (h *holdGetReply) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

func (h *holdGetReply) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		if cmdName(cmd) == "get" && h.armed.Swap(false) {
			close(h.entered)
			<-h.release
		}
		return err
	}
}

// A value read while the subscription is down, but returned after it came
// back (and after the flush that came with it), may have missed an
// invalidation: its TTL is capped to DegradedTTL like any read while down,
// so the caller does not keep it past the flush for its whole TTL.
func TestByteTierReadAcrossResubscription(t *testing.T) {
	srv := private(t)
	ctx := context.Background()
	admin := srv.Client()
	defer admin.Close()
	if err := admin.Do(ctx, "acl", "setuser", "default", "resetchannels").Err(); err != nil {
		t.Fatal(err)
	}
	client := goredis.NewClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}).Simple())
	t.Cleanup(func() { _ = client.Close() })
	h := &holdGetReply{entered: make(chan struct{}), release: make(chan struct{})}
	client.AddHook(h)
	bt, ev := newByteTier(t, client, func(o *ByteTierOptions) {
		o.DegradedTTL = time.Second
		o.ResubscribeDelay = 10 * time.Millisecond
	})
	_ = bt.Set(ctx, []byte("k"), []byte("v"), time.Hour) // stored; its publish refused
	h.armed.Store(true)
	type result struct {
		ttl time.Duration
		ok  bool
		err error
	}
	out := make(chan result, 1)
	go func() {
		_, ttl, ok, err := bt.Get(ctx, nil, []byte("k"))
		out <- result{ttl, ok, err}
	}()
	<-h.entered // read while down
	if bt.Stats().Subscribed {
		t.Fatal("subscribed during the read")
	}
	_, _, flushes := ev.snapshot()
	if err := admin.Do(ctx, "acl", "setuser", "default", "allchannels").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the subscription comes up, with its flush", func() bool {
		_, _, f := ev.snapshot()
		return bt.Stats().Subscribed && f > flushes
	})
	close(h.release)
	if r := <-out; r.err != nil || !r.ok || r.ttl > time.Second {
		t.Fatalf("Get = ttl %v, %v, %v; want the value with a TTL of at most DegradedTTL (1s)", r.ttl, r.ok, r.err)
	}
}

// A Get whose caller's context has ended is no error of Redis: it is not
// counted in L2Errors (nor does it tell the breaker anything).
func TestByteTierCallerGivingUpIsNoRedisError(t *testing.T) {
	checkLeaks(t)
	s := standalone(t)
	b := backend{name: "standalone", addrs: []string{s.Addr()}}
	cl, _ := b.client(t)
	bt, err := NewByteTier(ByteTierOptions{Client: cl, Prefix: testPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := bt.Get(ctx, nil, []byte("k")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with a cancelled context: %v, want context.Canceled", err)
	}
	if err := bt.Set(ctx, []byte("k"), []byte("v"), time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Set with a cancelled context: %v, want context.Canceled", err)
	}
	if st := bt.Stats(); st.L2Errors != 0 || st.L2WriteErrors != 0 {
		t.Fatalf("L2Errors %d, L2WriteErrors %d after the caller's own cancellation, want 0, 0", st.L2Errors, st.L2WriteErrors)
	}
}

// Close waits for a Set in flight: nothing is written after Close has
// returned.
func TestByteTierCloseWaitsForSet(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	bt, err := NewByteTier(ByteTierOptions{Client: cl, Prefix: testPrefix(t), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hold := newPipeHold("set")
	cl.AddHook(hold)
	done := make(chan error)
	go func() { done <- bt.Set(context.Background(), []byte("k"), []byte("v"), time.Minute) }()
	<-hold.entered
	closed := make(chan struct{})
	go func() { bt.Close(); close(closed) }()
	eventually(t, 10*time.Second, "Close has begun", func() bool {
		_, err := bt.Delete(context.Background(), []byte("other"))
		return errors.Is(err, ErrClosed)
	})
	select {
	case <-closed:
		t.Fatal("Close returned while a Set was writing")
	default:
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-closed
	if _, written := rawGet(t, cl, testPrefix(t)+"k"); !written {
		t.Fatal("the Set in flight did not write")
	}
}
