package service

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// holdSetClock is a store clock whose next call, once armed, signals held
// and waits for release: it stops a store Set in the middle of a change.
type holdSetClock struct {
	fakeClock
	armed   atomic.Bool
	held    chan struct{}
	release chan struct{}
}

func (c *holdSetClock) now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		close(c.held)
		<-c.release
	}
	return c.fakeClock.now()
}

// skipAfterXTier is a mapTier whose Set of key "x" fails (and then arms the
// clock), and whose Get signals entered.
type skipAfterXTier struct {
	mapTier
	clock   *holdSetClock
	entered chan struct{}
}

func (t *skipAfterXTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	if string(key) == "x" {
		t.clock.armed.Store(true) // the POST's next entry's store Set holds
		return errors.New("tier refuses x")
	}
	return t.mapTier.Set(ctx, key, value, ttl)
}

func (t *skipAfterXTier) Get(ctx context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	v, ttl, ok, err := t.mapTier.Get(ctx, dst, key)
	if string(key) == "k" {
		select {
		case t.entered <- struct{}{}:
		default:
		}
	}
	return v, ttl, ok, err
}

// A POST entry that skips the Tier (an earlier entry's Tier write failed)
// went through fence.change, which bumped the generation before its
// in-memory Set: a GET that took the generation in that gap, missed the
// store and read the Tier's older value filled it over the POST's answered
// write, which later reads then returned. The bump comes after the Set now.
func TestSkippedTierWriteNotOverwrittenByFill(t *testing.T) {
	checkLeaks(t)
	clock := &holdSetClock{held: make(chan struct{}), release: make(chan struct{})}
	clock.fakeClock = *newFakeClock()
	tier := &skipAfterXTier{mapTier: mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}},
		clock: clock, entered: make(chan struct{}, 1)}
	// The Tier holds v1 (an earlier write); this instance's store does not.
	tier.m["k"], _ = EncodeValue(nil, "application/json", []byte(`"v1"`))
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Now: clock.now, TierTimeout: time.Minute})

	// The POST: x's Tier write fails, so k skips the Tier (fence.change);
	// k's store Set is held (by the clock) after the generation bump.
	post := make(chan response, 1)
	go func() {
		post <- ts.do(t, ts.client, "POST", "/v1/entries?ttl=60", jsonCT(),
			strings.NewReader(`[{"id":"x","entry":"vx"},{"id":"k","entry":"v3"}]`))
	}()
	<-clock.held

	// A GET of k takes the bumped generation, misses the store (k's Set
	// has not run) and reads v1 from the Tier; its fill waits for the
	// stripe's lock, which the held change has.
	get := make(chan response, 1)
	go func() { get <- ts.do(t, ts.other, "GET", "/v1/entries/k", nil, nil) }()
	<-tier.entered
	close(clock.release)

	if r := <-post; r.status != 200 || !strings.Contains(r.body, `"stored":2`) {
		t.Fatalf("POST: %+v, want 200 stored 2", r)
	}
	<-get // concurrent with the POST: v1 or v3, either is fine

	// The POST was answered: every later read must see v3.
	if r := ts.req(t, "GET", "/v1/entries/k", nil, ""); r.status != 200 || r.body != `"v3"` {
		t.Fatalf("GET after the POST stored v3 (answered 200): %d %q; want 200 \"v3\" (read-your-writes): the Tier's older value was filled over it", r.status, r.body)
	}
}
