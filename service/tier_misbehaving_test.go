package service

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// hookTier is a Tier whose behaviour each test sets with hooks.
type hookTier struct {
	get func(ctx context.Context, dst, key []byte) ([]byte, time.Duration, bool, error)
	set func(ctx context.Context, key, value []byte, ttl time.Duration) error
	del func(ctx context.Context, key []byte) (bool, error)
}

func (f *hookTier) Get(ctx context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	return f.get(ctx, dst, key)
}

func (f *hookTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	return f.set(ctx, key, value, ttl)
}

func (f *hookTier) Delete(ctx context.Context, key []byte) (bool, error) { return f.del(ctx, key) }

// TestTierValueWithControlCharInContentType: a Tier value whose custom
// Content-Type held a control character (NUL, 0x01, DEL: no PUT can carry
// one, EncodeValue refuses it; another writer of the Tier put it there)
// was served as a hit and filled into the in-memory store, and its bytes
// went into the response header: malformed HTTP, the client's connection
// broken on every GET of the key until its TTL passed. A value not in the
// server's stored form is a miss (Tier's doc): 404, not stored.
func TestTierValueWithControlCharInContentType(t *testing.T) {
	checkLeaks(t)
	for _, ct := range []string{"a\x00b", "text/\x01x", "x/y\x7f"} {
		t.Run(fmt.Sprintf("%q", ct), func(t *testing.T) {
			foreign := append([]byte{kindCustom, byte(len(ct))}, ct...)
			foreign = append(foreign, "BODY"...)
			tier := &hookTier{
				get: func(_ context.Context, dst, _ []byte) ([]byte, time.Duration, bool, error) {
					return append(dst, foreign...), 0, true, nil
				},
				set: func(context.Context, []byte, []byte, time.Duration) error { return nil },
				del: func(context.Context, []byte) (bool, error) { return false, nil },
			}
			ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier})
			for i := range 2 {
				req, err := http.NewRequest("GET", ts.url+"/v1/entries/k", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := ts.client.Do(req)
				if err != nil {
					t.Errorf("GET %d of a key whose Tier value has the Content-Type %q: %v; want a 404 (a value not in the stored form is a miss)", i+1, ct, err)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					t.Errorf("GET %d: %d %q; want 404", i+1, resp.StatusCode, b)
				}
			}
			if st := ts.Stats().Tier; st.Hits != 0 || st.Misses != 2 {
				t.Errorf("tier stats %+v; want 2 misses, no hit", *st)
			}
			if v, ok := ts.Store().Get(nil, []byte("k")); ok {
				t.Errorf("the foreign Tier value was filled into the in-memory store: %q", v)
			}
		})
	}
}

// TestPostSkippedEntriesDoNotWaitForWriters: once a POST's Tier write had
// failed, each of its remaining entries, which skip the Tier, still waited
// for the Tier write of any other request writing the same key (fence.open
// keeps one key's Tier writes in order); with a hanging Tier and other
// clients writing the batch's keys, a 10-entry POST took about 9
// TierTimeouts, where Tier's doc promises one. An entry that skips the
// Tier has no Tier write to order: it changes the store under the
// stripe's lock without waiting.
func TestPostSkippedEntriesDoNotWaitForWriters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const tt = 100 * time.Millisecond
		const n = 10
		var mu sync.Mutex
		var sets []string
		tier := &hookTier{
			get: func(ctx context.Context, dst, _ []byte) ([]byte, time.Duration, bool, error) {
				return dst, 0, false, nil
			},
			set: func(ctx context.Context, key, _ []byte, _ time.Duration) error {
				mu.Lock()
				sets = append(sets, string(key))
				mu.Unlock()
				<-ctx.Done()
				return ctx.Err()
			},
			del: func(ctx context.Context, _ []byte) (bool, error) { <-ctx.Done(); return false, ctx.Err() },
		}
		s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, TierTimeout: tt, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var wg sync.WaitGroup
		for i := 1; i < n; i++ {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 90 * time.Millisecond)
				if w := svcfuzzDo(s, "PUT", fmt.Sprintf("/v1/entries/k%d", i), nil, "put"); w.Code != 204 {
					t.Errorf("PUT k%d: %d %s", i, w.Code, w.Body)
				}
			})
		}
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"k%d","entry":%d}`, i, i)
		}
		b.WriteByte(']')
		start := time.Now()
		w := svcfuzzDo(s, "POST", "/v1/entries", jsonCT(), b.String())
		took := time.Since(start)
		wg.Wait()
		if w.Code != 200 {
			t.Fatalf("POST: %d %s", w.Code, w.Body)
		}
		if took > 2*tt {
			mu.Lock()
			defer mu.Unlock()
			t.Errorf("a %d-entry POST with a hanging Tier took %v (TierTimeout %v, %.1f TierTimeouts) while other clients wrote its keys; "+
				"want at most 2 TierTimeouts (its only Tier write hangs once; its other entries skip the Tier). Tier writes: %v",
				n, took, tt, float64(took)/float64(tt), sets)
		}
	})
}
