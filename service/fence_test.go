package service

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedTier is a mapTier whose next Get, once armed, reads its value,
// signals entered, and waits for the gate to close before returning it: a
// slow Tier read that a change of the key overtakes.
type gatedTier struct {
	mapTier
	gmu     sync.Mutex
	gate    chan struct{} // armed for the next Get; nil: not armed
	entered chan struct{}
}

func (g *gatedTier) arm() chan struct{} {
	g.gmu.Lock()
	defer g.gmu.Unlock()
	g.gate, g.entered = make(chan struct{}), make(chan struct{})
	return g.gate
}

func (g *gatedTier) Get(ctx context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	v, ttl, ok, err := g.mapTier.Get(ctx, dst, key)
	g.gmu.Lock()
	gate, entered := g.gate, g.entered
	g.gate = nil
	g.gmu.Unlock()
	if gate != nil {
		entered <- struct{}{}
		<-gate
	}
	return v, ttl, ok, err
}

// A value read from the Tier before a change of its key (a local PUT or
// DELETE, another instance's invalidation, or a flush after missed
// invalidations) completed is served to its
// reader but never stored in place of the change: the next read sees the
// change.
func TestTierFillDoesNotOverwriteChange(t *testing.T) {
	checkLeaks(t)
	for _, change := range []string{"put", "delete", "invalidate", "invalidate all"} {
		t.Run(change, func(t *testing.T) {
			tier := &gatedTier{mapTier: mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}}
			ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier})
			if r := ts.req(t, "PUT", "/v1/entries/k", nil, "old"); r.status != 204 {
				t.Fatal(r)
			}
			ts.Invalidate([]byte("k")) // only the Tier holds "old" now

			gate := tier.arm()
			entered := tier.entered
			done := make(chan response)
			go func() { done <- ts.do(t, ts.other, "GET", "/v1/entries/k", nil, nil) }()
			<-entered // the read has "old" from the Tier, not yet stored
			want := 404
			switch change {
			case "put":
				// The PUT writes through to the Tier too; the Tier is not
				// gated for it (Set is not).
				if r := ts.req(t, "PUT", "/v1/entries/k", nil, "new"); r.status != 204 {
					t.Fatal(r)
				}
				want = 200
			case "delete":
				if r := ts.req(t, "DELETE", "/v1/entries/k", nil, ""); r.status != 204 {
					t.Fatal(r)
				}
			case "invalidate":
				// Another instance deleted it: the Tier no longer holds it,
				// and its message reaches this instance.
				tier.mapTier.Delete(context.Background(), []byte("k"))
				ts.Invalidate([]byte("k"))
			case "invalidate all":
				// Another instance deleted it, and this one missed the
				// message: its Tier flushes the store.
				tier.mapTier.Delete(context.Background(), []byte("k"))
				ts.InvalidateAll()
			}
			close(gate)
			if r := <-done; r.status != 200 || r.body != "old" {
				t.Fatalf("the overtaken read: %+v, want 200 old", r)
			}
			r := ts.req(t, "GET", "/v1/entries/k", nil, "")
			if r.status != want || (want == 200 && r.body != "new") {
				t.Fatalf("read after the %s: %d %q, want %d", change, r.status, r.body, want)
			}
		})
	}
}

// slowDeleteTier is a mapTier whose next Delete, once armed, signals
// entered and waits for the gate to close before deleting.
type slowDeleteTier struct {
	mapTier
	gate, entered chan struct{}
}

func (d *slowDeleteTier) Delete(ctx context.Context, key []byte) (bool, error) {
	if d.gate != nil {
		d.entered <- struct{}{}
		<-d.gate
	}
	return d.mapTier.Delete(ctx, key)
}

// A read that misses the in-memory store while a DELETE is between its
// in-memory delete and its Tier delete finds the old value in the Tier: it
// may serve it (the DELETE has not completed), but must not store it, or
// reads after the DELETE's 204 would keep returning the deleted value.
func TestTierFillDuringChange(t *testing.T) {
	checkLeaks(t)
	tier := &slowDeleteTier{mapTier: mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}}
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier})
	if r := ts.req(t, "PUT", "/v1/entries/k", nil, "old"); r.status != 204 {
		t.Fatal(r)
	}
	tier.gate, tier.entered = make(chan struct{}), make(chan struct{})
	done := make(chan response)
	go func() { done <- ts.do(t, ts.other, "DELETE", "/v1/entries/k", nil, nil) }()
	<-tier.entered // deleted in memory, not yet in the Tier
	if r := ts.req(t, "GET", "/v1/entries/k", nil, ""); r.status != 200 || r.body != "old" {
		t.Fatalf("the read during the DELETE: %+v, want 200 old (from the Tier)", r)
	}
	close(tier.gate)
	if r := <-done; r.status != 204 {
		t.Fatalf("DELETE: %+v", r)
	}
	if r := ts.req(t, "GET", "/v1/entries/k", nil, ""); r.status != 404 {
		t.Fatalf("read after the DELETE: %d %q, want 404", r.status, r.body)
	}
}

// slowFirstSetTier is a mapTier whose first Set signals entered and waits
// for release before storing.
type slowFirstSetTier struct {
	mapTier
	entered, release chan struct{}
	held             atomic.Bool
}

func (d *slowFirstSetTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	if !d.held.Swap(true) {
		close(d.entered)
		<-d.release
	}
	return d.mapTier.Set(ctx, key, value, ttl)
}

// Two PUTs of one key leave the store and the Tier with the same value:
// the second waits for the first's Tier write, so that the Tier's last
// write is the store's (this instance ignores its own invalidations).
func TestWritesOfOneKeyInOrder(t *testing.T) {
	checkLeaks(t)
	tier := &slowFirstSetTier{mapTier: mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}},
		entered: make(chan struct{}), release: make(chan struct{})}
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, TierTimeout: time.Minute})
	first := make(chan response, 1)
	go func() { first <- ts.do(t, ts.other, "PUT", "/v1/entries/k", nil, strings.NewReader("v1")) }()
	<-tier.entered // v1 is in the store; its Tier write is held
	second := make(chan response, 1)
	go func() { second <- ts.do(t, ts.client, "PUT", "/v1/entries/k", nil, strings.NewReader("v2")) }()
	// Give the second PUT time to overtake, if it could (it must not: the
	// result below holds however long this is).
	select {
	case r := <-second:
		second <- r
	case <-time.After(500 * time.Millisecond):
	}
	close(tier.release)
	for _, ch := range []chan response{first, second} {
		if r := <-ch; r.status != 204 {
			t.Fatalf("PUT: %+v", r)
		}
	}
	local := ts.req(t, "GET", "/v1/entries/k", nil, "")
	stored, _, _, _ := tier.mapTier.Get(context.Background(), nil, []byte("k"))
	if _, body, _ := decodeValue(stored); local.body != "v2" || string(body) != "v2" {
		t.Fatalf("the store serves %q, the Tier holds %q; want v2 in both", local.body, body)
	}
}

// A change whose in-memory part panics leaves its stripe as it found it:
// not open (fills store again), not held (the next change proceeds).
func TestFenceOpenPanics(t *testing.T) {
	f := newFence()
	key := []byte("k")
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		f.open(key, func() { panic("store bug") })
	}()
	stored := false
	if !f.fill(key, f.begin(key), func() { stored = true }) || !stored {
		t.Fatal("a fill does not store after the panic: the stripe stayed open")
	}
	done := make(chan struct{})
	go func() {
		f.open(key, func() {})
		f.close(key)
		close(done)
	}()
	<-done // would block for good if the panicked change had kept the stripe
}

// strictTier is a mapTier that refuses calls whose context is done, as a
// Tier must (and a failing one does: fail).
type strictTier struct{ mapTier }

func (s *strictTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.mapTier.Set(ctx, key, value, ttl)
}

func (s *strictTier) Delete(ctx context.Context, key []byte) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return s.mapTier.Delete(ctx, key)
}

// A write's tier part does not depend on the client staying: once the
// in-memory store has changed, the tier follows even if the request's
// context is done (the client went away).
func TestTierWriteOutlivesClient(t *testing.T) {
	tier := &strictTier{mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.write(gone, []byte("k"), []byte("\x00v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, _, ok, _ := tier.mapTier.Get(context.Background(), nil, []byte("k")); !ok || string(v) != "\x00v" {
		t.Fatalf("the tier holds %q, %v; want the write", v, ok)
	}
	if found, err := s.del(gone, []byte("k")); !found || err != nil {
		t.Fatalf("del = %v, %v", found, err)
	}
	if _, _, ok, _ := tier.mapTier.Get(context.Background(), nil, []byte("k")); ok {
		t.Fatal("the tier still holds the deleted key")
	}
}

// A DELETE whose tier delete fails answers 503: the key is gone from this
// instance, but a read could bring it back from the tier, so the client
// must not take the DELETE as done.
func TestDeleteTierFailure(t *testing.T) {
	checkLeaks(t)
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier})
	if r := ts.req(t, "PUT", "/v1/entries/k", nil, "old"); r.status != 204 {
		t.Fatal(r)
	}
	tier.mu.Lock()
	tier.fail = true
	tier.mu.Unlock()
	if r := ts.req(t, "DELETE", "/v1/entries/k", nil, ""); r.status != 503 || !strings.Contains(r.body, "second tier failed") {
		t.Fatalf("DELETE with the tier failing: %d %q; want 503", r.status, r.body)
	}
	tier.mu.Lock()
	tier.fail = false
	tier.mu.Unlock()
	if r := ts.req(t, "DELETE", "/v1/entries/k", nil, ""); r.status != 204 {
		t.Fatalf("the retried DELETE: %d %q", r.status, r.body)
	}
	if r := ts.req(t, "GET", "/v1/entries/k", nil, ""); r.status != 404 {
		t.Fatalf("GET after the DELETE: %d %q", r.status, r.body)
	}
}
