package service

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// readOnlyTier is a mapTier whose writes fail while its reads work, as a
// Redis at maxmemory with the noeviction policy does (-OOM on SET, GET
// served).
type readOnlyTier struct{ mapTier }

func (t *readOnlyTier) Set(context.Context, []byte, []byte, time.Duration) error {
	return errors.New("OOM command not allowed when used memory > 'maxmemory'")
}

// hookCtx is a request context that runs hook the first time its
// Deadline is asked for: tierGet derives the Tier call's context from it
// right after the in-memory store missed, before the fill's generation is
// taken.
type hookCtx struct {
	context.Context
	once sync.Once
	hook func()
}

func (c *hookCtx) Deadline() (time.Time, bool) {
	c.once.Do(c.hook)
	return c.Context.Deadline()
}

// Read-your-writes with a Tier whose writes fail: a PUT answered 204 is held
// by the in-memory store (the Tier error does not fail it), so a read that
// missed the store just before the PUT may serve the Tier's older value but
// must not store it over the PUT's: every read after the 204 must see v2.
func TestTierFillDoesNotOverwriteLaterLocalWrite(t *testing.T) {
	tier := &readOnlyTier{mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}}
	// Another instance wrote v1 (before this instance's PUT below).
	tier.m["k"], _ = EncodeValue(nil, "", []byte("v1"))
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	do := func(ctx context.Context, method, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, "/v1/entries/k", strings.NewReader(body)).WithContext(ctx)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	// The GET misses the in-memory store; before it asks the Tier, the
	// PUT of v2 runs to completion.
	var put *httptest.ResponseRecorder
	ctx := &hookCtx{Context: context.Background(), hook: func() { put = do(context.Background(), "PUT", "v2") }}
	if w := do(ctx, "GET", ""); w.Code != 200 {
		t.Fatalf("the GET that overlaps the PUT: %d %s", w.Code, w.Body)
	}
	if put == nil || put.Code != 204 {
		t.Fatalf("PUT: %v", put)
	}
	if w := do(context.Background(), "GET", ""); w.Code != 200 || w.Body.String() != "v2" {
		t.Fatalf("GET after the PUT of v2 was answered 204: %d %q; want 200 \"v2\" (read-your-writes)", w.Code, w.Body)
	}
}
