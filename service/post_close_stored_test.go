package service

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateSetTier is a Tier in a map whose Set of gateKey signals entered and
// waits for release before storing: a Tier write that Close overtakes.
type gateSetTier struct {
	mu               sync.Mutex
	m                map[string][]byte
	gateKey          string
	entered, release chan struct{}
}

func (g *gateSetTier) Get(_ context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	v, ok := g.m[string(key)]
	return append(dst, v...), 0, ok, nil
}

func (g *gateSetTier) Set(_ context.Context, key, value []byte, _ time.Duration) error {
	if string(key) == g.gateKey {
		close(g.entered)
		<-g.release
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.m[string(key)] = bytes.Clone(value)
	return nil
}

func (g *gateSetTier) Delete(_ context.Context, key []byte) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.m[string(key)]
	delete(g.m, string(key))
	return ok, nil
}

// A POST that Close overtook mid-batch answered 503 like a request that
// changed nothing, although its first entry was already written to the
// shared Tier. Its 503 now says how many entries it stored ("stored"), as
// the package doc says.
func TestPostCutShortByCloseSaysStored(t *testing.T) {
	checkLeaks(t)
	tier := &gateSetTier{m: map[string][]byte{}, gateKey: "a", entered: make(chan struct{}), release: make(chan struct{})}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, TierTimeout: time.Minute, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan *httptest.ResponseRecorder)
	go func() {
		req := httptest.NewRequest("POST", "/v1/entries", strings.NewReader(`[{"id":"a","entry":1},{"id":"b","entry":2}]`))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		done <- w
	}()
	<-tier.entered // a is in the store, its Tier write in flight
	s.Close()      // the shutdown timed out: Close overtakes the POST
	close(tier.release)
	w := <-done
	tier.mu.Lock()
	_, inTier := tier.m["a"]
	tier.mu.Unlock()
	if w.Code != 503 || !inTier {
		t.Fatalf("POST answered %d %q, entry a in the Tier: %v; want 503 with a stored", w.Code, w.Body, inTier)
	}
	if !strings.Contains(w.Body.String(), `"stored":1}`) {
		t.Errorf("POST cut short by Close answered %q: the body does not say that one entry was stored", w.Body)
	}
}
