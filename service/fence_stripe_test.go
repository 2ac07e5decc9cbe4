package service

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// stripeHangTier is a Tier whose writes hang until their context is done
// (a Redis that stopped answering), logging when each Set starts and
// returns. The Set of key holdKey, once its context is done, also waits
// for hold to be closed before it returns: the test closes it once the
// second request has entered the handler, so that request is known to
// have arrived while the first Tier write was still running.
type stripeHangTier struct {
	mu      sync.Mutex
	log     []string
	holdKey string
	hold    chan struct{}
	entered chan string
}

func (h *stripeHangTier) add(ev string) {
	h.mu.Lock()
	h.log = append(h.log, ev)
	h.mu.Unlock()
}

func (h *stripeHangTier) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.log)
}

func (h *stripeHangTier) Get(_ context.Context, dst, _ []byte) ([]byte, time.Duration, bool, error) {
	return dst, 0, false, nil
}

func (h *stripeHangTier) Set(ctx context.Context, key, _ []byte, _ time.Duration) error {
	k := string(key)
	h.add("set " + k)
	h.entered <- k
	<-ctx.Done()
	if k == h.holdKey {
		<-h.hold
	}
	h.add("return " + k)
	return ctx.Err()
}

func (h *stripeHangTier) Delete(ctx context.Context, _ []byte) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// TestHangingTierWriteDoesNotBlockStripeMate: a PUT of key b must not wait
// for the hanging Tier write of another PUT, of an unrelated key a that
// merely shares b's fence stripe.
//
// Documented promises (tier.go, Tier): "Writes (PUT, POST) go to the
// in-memory store first, then to the tier (write-through), each within
// Options.TierTimeout", and "a tier that hangs costs a POST one
// TierTimeout, not one per entry"; options.go: "TierTimeout bounds each
// call to Tier". A request's Tier cost is bounded by TierTimeout per Tier
// call it makes, not by the Tier calls of other requests for other keys.
//
// fence.open once took a lock of the stripe that the previous change of
// the stripe held across its whole Tier write: with a Tier that hangs, a
// PUT took n x TierTimeout behind n-1 writes of its stripe's keys (under a
// steady write rate, a wait without bound). Changes now wait only for
// changes of the same key.
func TestHangingTierWriteDoesNotBlockStripeMate(t *testing.T) {
	const tierTimeout = 300 * time.Millisecond
	tier := &stripeHangTier{holdKey: "a", hold: make(chan struct{}), entered: make(chan string, 4)}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, TierTimeout: tierTimeout, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// b: a key other than a on a's stripe.
	b := ""
	for i := 0; ; i++ {
		if k := fmt.Sprintf("b%d", i); s.fence.stripe([]byte(k)) == s.fence.stripe([]byte("a")) {
			b = k
			break
		}
	}
	bEntered := make(chan struct{})
	s.entered = func(r *http.Request) {
		if r.URL.Path == "/v1/entries/"+b {
			tier.add("enter " + b)
			close(bEntered)
		}
	}

	doneA := make(chan int, 1)
	go func() { doneA <- svcfuzzDo(s, "PUT", "/v1/entries/a", nil, "A").Code }()
	if k := <-tier.entered; k != "a" {
		t.Fatalf("first Tier write for %q, want a", k)
	}
	// a is in the store; its Tier write hangs. Now PUT b.
	type result struct {
		code int
		took time.Duration
	}
	doneB := make(chan result, 1)
	go func() {
		start := time.Now()
		code := svcfuzzDo(s, "PUT", "/v1/entries/"+b, nil, "B").Code
		doneB <- result{code, time.Since(start)}
	}()
	<-bEntered
	close(tier.hold) // a's Set may return (once its TierTimeout is over)
	if code := <-doneA; code != 204 {
		t.Fatalf("PUT a: %d", code)
	}
	rb := <-doneB
	if rb.code != 204 {
		t.Fatalf("PUT %s: %d", b, rb.code)
	}
	ev := tier.events()
	setB, retA := slices.Index(ev, "set "+b), slices.Index(ev, "return a")
	if setB < 0 || retA < 0 || slices.Index(ev, "enter "+b) > retA {
		t.Fatalf("events %v", ev)
	}
	if setB > retA {
		t.Fatalf("PUT %s (a key unrelated to a, on a's fence stripe) arrived while a's Tier write hung, "+
			"and could not start its own Tier write until a's had timed out: events %v; "+
			"the PUT took %v with TierTimeout %v (a Tier that hangs costs it a TierTimeout per earlier write of its stripe)",
			b, ev, rb.took.Round(time.Millisecond), tierTimeout)
	}
}
