package redis

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBreaker(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	var changes []string
	b := newBreaker(3, time.Second, clock, func(from, to BreakerState) { changes = append(changes, from.String()+">"+to.String()) })

	// Failures that are not consecutive do not open it.
	b.failure()
	b.failure()
	b.success()
	b.failure()
	b.failure()
	if b.State() != BreakerClosed || !b.allow() {
		t.Fatal("opened after 2 consecutive failures, want 3")
	}
	b.failure()
	if b.State() != BreakerOpen {
		t.Fatalf("state %v after 3 consecutive failures, want open", b.State())
	}
	if b.allow() {
		t.Fatal("an open breaker let a call through")
	}
	clock.add(999 * time.Millisecond)
	if b.allow() {
		t.Fatal("let a call through before OpenFor")
	}

	// After OpenFor exactly one probe goes through, however many ask.
	clock.add(time.Millisecond)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b.allow() {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 1 || b.State() != BreakerHalfOpen {
		t.Fatalf("%d probes let through, state %v; want 1, half-open", allowed.Load(), b.State())
	}
	// A failed probe opens it again for OpenFor.
	b.failure()
	if b.State() != BreakerOpen || b.allow() {
		t.Fatal("a failed probe did not reopen the breaker")
	}
	clock.add(time.Second)
	if !b.allow() {
		t.Fatal("no probe after the second OpenFor")
	}
	// A probe whose caller gave up lets the next call probe.
	b.neutral()
	if b.State() != BreakerOpen || !b.allow() {
		t.Fatal("after a neutral probe, the next call did not probe")
	}
	// A successful probe closes it.
	b.success()
	if b.State() != BreakerClosed || !b.allow() {
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
