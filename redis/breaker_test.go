package redis

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// admit returns a ticket from b, failing the test if b refuses the call.
func admit(t *testing.T, b *breaker) ticket {
	t.Helper()
	tk, ok := b.allow()
	if !ok {
		t.Fatalf("breaker (%v) refused a call", b.State())
	}
	return tk
}

func refused(b *breaker) bool {
	_, ok := b.allow()
	return !ok
}

func TestBreaker(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	var changes []string
	b := newBreaker(3, time.Second, clock, func(from, to BreakerState) { changes = append(changes, from.String()+">"+to.String()) })

	// Failures that are not consecutive do not open it.
	b.failure(admit(t, b))
	b.failure(admit(t, b))
	b.success(admit(t, b))
	b.failure(admit(t, b))
	b.failure(admit(t, b))
	if b.State() != BreakerClosed || refused(b) {
		t.Fatal("opened after 2 consecutive failures, want 3")
	}
	b.failure(admit(t, b))
	if b.State() != BreakerOpen {
		t.Fatalf("state %v after 3 consecutive failures, want open", b.State())
	}
	if !refused(b) {
		t.Fatal("an open breaker let a call through")
	}
	clock.add(999 * time.Millisecond)
	if !refused(b) {
		t.Fatal("let a call through before OpenFor")
	}

	// After OpenFor exactly one probe goes through, however many ask.
	clock.add(time.Millisecond)
	var allowed atomic.Int32
	var probe atomic.Uint64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tk, ok := b.allow(); ok {
				allowed.Add(1)
				probe.Store(uint64(tk))
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 1 || b.State() != BreakerHalfOpen {
		t.Fatalf("%d probes let through, state %v; want 1, half-open", allowed.Load(), b.State())
	}
	// A failed probe opens it again for OpenFor.
	b.failure(ticket(probe.Load()))
	if b.State() != BreakerOpen || !refused(b) {
		t.Fatal("a failed probe did not reopen the breaker")
	}
	clock.add(time.Second)
	// A probe whose caller gave up lets the next call probe.
	b.neutral(admit(t, b))
	if b.State() != BreakerOpen {
		t.Fatalf("state %v after a neutral probe, want open", b.State())
	}
	// A successful probe closes it.
	b.success(admit(t, b))
	if b.State() != BreakerClosed || refused(b) {
		t.Fatalf("state %v after a successful probe, want closed", b.State())
	}
	if b.opens.Load() != 2 {
		t.Fatalf("opened %d times, want 2", b.opens.Load())
	}
	want := []string{"closed>open", "open>half-open", "half-open>open", "open>half-open", "half-open>open", "open>half-open", "half-open>closed"}
	if len(changes) != len(want) {
		t.Fatalf("changes %v, want %v", changes, want)
	}
	for i := range want {
		if changes[i] != want[i] {
			t.Fatalf("changes %v, want %v", changes, want)
		}
	}
}

// A call admitted while the breaker was closed, whose caller gives up
// while the breaker is half-open, is not the probe: its neutral result
// must not let a second probe through while the first is in flight.
func TestBreakerStaleNeutralAdmitsNoSecondProbe(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	b := newBreaker(1, time.Second, clock, nil)
	old := admit(t, b) // still in flight
	b.failure(admit(t, b))
	clock.add(time.Second)
	probe := admit(t, b)
	b.neutral(old)
	if !refused(b) {
		t.Fatal("a second probe was let through while the first is still in flight")
	}
	b.success(probe)
	if b.State() != BreakerClosed {
		t.Fatalf("state %v after the probe succeeded, want closed", b.State())
	}
}

// A late failure of a call admitted while closed neither reopens the
// half-open breaker nor hides the probe's success; nor does it count
// towards opening the breaker once it has closed again.
func TestBreakerStaleFailureIgnored(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	b := newBreaker(2, time.Second, clock, nil)
	old1, old2, old3 := admit(t, b), admit(t, b), admit(t, b)
	b.failure(old1)
	b.failure(old2) // opens
	clock.add(time.Second)
	probe := admit(t, b)
	b.failure(old3) // not the probe
	if b.State() != BreakerHalfOpen {
		t.Fatalf("state %v after a stale failure, want half-open", b.State())
	}
	b.success(probe)
	if b.State() != BreakerClosed {
		t.Fatalf("state %v after the probe succeeded, want closed", b.State())
	}
	b.failure(old3) // reported twice, still stale: must not count
	b.failure(admit(t, b))
	if b.State() != BreakerClosed {
		t.Fatalf("state %v after one current failure (threshold 2), want closed", b.State())
	}
	// A stale success does not reset the current failures either.
	b.success(old1)
	b.failure(admit(t, b))
	if b.State() != BreakerOpen {
		t.Fatalf("state %v after two current failures, want open", b.State())
	}
}

// The threshold is counted without wrapping, however large.
func TestBreakerHugeThreshold(t *testing.T) {
	b := newBreaker(1<<32, time.Second, nil, nil)
	for range 3 {
		b.failure(admit(t, b))
	}
	if b.State() != BreakerClosed {
		t.Fatalf("state %v after 3 failures with a threshold of 1<<32", b.State())
	}
	dead := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	defer dead.Close()
	bt, err := NewByteTier(ByteTierOptions{Client: dead, Timeout: 20 * time.Millisecond, BreakerFailures: 1 << 32,
		ResubscribeDelay: time.Hour, Logger: slog.New(slog.NewTextHandler(&lineCounter{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	_, _, _, _ = bt.Get(context.Background(), nil, []byte("k"))
	if st := bt.Stats().Breaker; st != BreakerClosed {
		t.Fatalf("breaker %v after 1 failure with BreakerFailures 1<<32", st)
	}
}

// Options.Logger promises at most one line per kind per second: so for the
// breaker's changes too, where each state changed to is a kind (here open
// and half-open: two a second).
func TestBreakerLogsRateLimited(t *testing.T) {
	checkLeaks(t)
	dead := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	defer dead.Close()
	lines := &lineCounter{}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	start := time.Now()
	bt, err := NewByteTier(ByteTierOptions{
		Client: dead, Timeout: 20 * time.Millisecond, BreakerFailures: 1, Clock: clock,
		ResubscribeDelay: time.Hour,
		Logger:           slog.New(slog.NewTextHandler(lines, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	for range 5 { // 9 changes: closed>open, then (open>half-open, half-open>open) × 4
		_, _, _, _ = bt.Get(context.Background(), nil, []byte("k")) // fails: opens (or reopens)
		clock.add(time.Second)                                      // the next Get probes
	}
	// Lines at least a second apart, all since start: this bound holds
	// however slow the machine (the 5 Gets usually take milliseconds,
	// and the bound is then 2).
	elapsed := time.Since(start)
	n := lines.count("circuit breaker")
	if limit := 2 * (1 + int(elapsed/time.Second)); n > limit {
		t.Fatalf("%d breaker log lines in %v, want at most %d (one per kind per second)", n, elapsed, limit)
	}
}

// A half-open probe whose Redis call panics (in a client hook; loading
// recovers a Probe's panic) counts as neutral: the next call probes again
// (the breaker does not stay half-open for good), and the read gives its
// round trip back (Close does not wait for it for ever). The same with a
// context that can be cancelled, whose read runs on a goroutine of its own
// (detach) and whose panic is raised again on the caller's.
func TestBreakerProbePanics(t *testing.T) {
	for _, cancellable := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancellable=%v", cancellable), func(t *testing.T) {
			ctx := context.Background()
			if cancellable {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			breakerProbePanics(t, ctx)
		})
	}
}

func breakerProbePanics(t *testing.T, ctx context.Context) {
	cl := standaloneClient(t)
	src := newSource()
	for _, k := range []string{"a", "b", "c"} {
		src.set(k, "v")
	}
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	c, err := New(Options[string]{Client: cl, Loader: src, Prefix: testPrefix(t), Timeout: time.Second,
		BreakerFailures: 1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	waitSubscribed(t, c)
	h := &panicHook{}
	cl.AddHook(h)
	get := func(key string) {
		t.Helper()
		if v, err := c.Get(ctx, key); err != nil || v != "v" {
			t.Fatalf("Get(%q) = %q, %v; want v", key, v, err)
		}
	}
	get("a") // the GET fails: the breaker opens
	clock.add(time.Second)
	get("b") // the probe's GET panics (recovered by L1); the load probes again
	if n := h.n.Load(); n < 3 {
		t.Fatalf("%d GETs through the hook; want the failed one, the panicking probe and another probe", n)
	}
	if st := c.Stats(); st.Breaker != BreakerClosed {
		t.Errorf("breaker %v after the second probe (L2Skipped %d), want closed", st.Breaker, st.L2Skipped)
	}
	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second): // generous: Close waits for nothing here
		t.Errorf("Close still waiting after 10s (the panicked read holds its round trip)")
	}
}

// The breaker reports its changes after releasing its lock, so that a slow
// logger holds no call back: a report that calls the breaker itself does
// not deadlock.
func TestBreakerReportsChangesUnlocked(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	var b *breaker
	var seen []BreakerState
	b = newBreaker(1, time.Second, clock, func(from, to BreakerState) {
		_, _ = b.allow() // takes the lock unless closed
		seen = append(seen, to)
	})
	b.failure(admit(t, b))
	clock.add(time.Second)
	b.success(admit(t, b))
	if len(seen) != 3 || b.State() != BreakerClosed {
		t.Fatalf("changes to %v, state %v; want open, half-open, closed", seen, b.State())
	}
}
