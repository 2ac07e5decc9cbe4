package service

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// setPanicTier panics in Set for the keys in panicOn.
type setPanicTier struct {
	mapTier
	panicOn map[string]bool
}

func (p *setPanicTier) Set(ctx context.Context, key, value []byte, ttl time.Duration) error {
	if p.panicOn[string(key)] {
		panic("tier bug")
	}
	return p.mapTier.Set(ctx, key, value, ttl)
}

// entries_stored counts the entries the in-memory store took even when a
// Tier that panics fails the request after that (it counted them only
// once the request was answered: a PUT's entry, or a POST's entries
// before the panic, were in the store, served by GET, and not counted).
func TestEntriesStoredTierPanic(t *testing.T) {
	tier := &setPanicTier{mapTier: mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}},
		panicOn: map[string]bool{"p": true, "b": true}}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w := svcfuzzDo(s, "PUT", "/v1/entries/p", nil, "v"); w.Code != 500 {
		t.Fatalf("PUT: %d %s; want the recovered panic's 500", w.Code, w.Body)
	}
	w := svcfuzzDo(s, "POST", "/v1/entries", jsonCT(), `[{"id":"a","entry":1},{"id":"b","entry":2},{"id":"c","entry":3}]`)
	if w.Code != 500 {
		t.Fatalf("POST: %d %s; want the recovered panic's 500", w.Code, w.Body)
	}
	for _, k := range []string{"p", "a", "b"} {
		if w := svcfuzzDo(s, "GET", "/v1/entries/"+k, nil, ""); w.Code != 200 {
			t.Fatalf("GET %s: %d; the store holds it", k, w.Code)
		}
	}
	st := s.Stats()
	if st.EntriesStored != 3 || st.Store.Sets != 3 {
		t.Errorf("entries_stored %d, store sets %d; want 3 (p, a and b are in the store)", st.EntriesStored, st.Store.Sets)
	}
}

// The duration histogram's sum never goes negative: a route's durations
// summed past 2^63 ns (292 years of request time: 10,000 requests in
// flight at once for 11 days) wrapped the int64 sum to a negative number.
func TestDurationSumNoOverflow(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := time.Duration(math.MaxInt64 / 2)
	for range 3 {
		s.counters.observe(routeGet, 200, d)
	}
	w := svcfuzzDo(s, "GET", "/metrics", nil, "")
	const prefix = `cachekit_http_request_duration_seconds_sum{route="entry_get"} `
	for line := range strings.Lines(w.Body.String()) {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		got, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 * d.Seconds(); math.Abs(got-want) > want*1e-9 {
			t.Fatalf("sum %v; want %v", got, want)
		}
		return
	}
	t.Fatalf("no %q in %s", prefix, w.Body)
}

// A write whose Tier part failed lives in this instance's store only: the
// package documentation (Consistency) says an invalidation drops it and a
// read then gets the Tier's older value. This pins that documented
// exception to read-your-writes.
func TestFailedTierWriteInvalidateAll(t *testing.T) {
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if w := svcfuzzDo(s, "PUT", "/v1/entries/k", nil, "old"); w.Code != 204 {
		t.Fatalf("PUT old: %d", w.Code)
	}
	tier.mu.Lock()
	tier.fail = true
	tier.mu.Unlock()
	if w := svcfuzzDo(s, "PUT", "/v1/entries/k", nil, "new"); w.Code != 204 {
		t.Fatalf("PUT new: %d", w.Code)
	}
	tier.mu.Lock()
	tier.fail = false
	tier.mu.Unlock()
	if w := svcfuzzDo(s, "GET", "/v1/entries/k", nil, ""); w.Body.String() != "new" {
		t.Fatalf("GET before InvalidateAll: %q; want new", w.Body)
	}
	s.InvalidateAll()
	if w := svcfuzzDo(s, "GET", "/v1/entries/k", nil, ""); w.Body.String() != "old" {
		t.Fatalf("GET after InvalidateAll: %q; the documented exception is the Tier's old value", w.Body)
	}
}
