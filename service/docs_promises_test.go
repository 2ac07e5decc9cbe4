package service

import (
	"bufio"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The index's memory after deletions is within what doc.go's Memory
// section says: it promised at most 22 bytes per live entry, which holds
// only while entries are added (a store table halves only when an eighth
// full); here six in seven entries are deleted (about 46 bytes each).
func TestIndexBytesPerLiveEntryAfterDeletes(t *testing.T) {
	// One shard and entries that never expire: the table sizes depend only
	// on the counts, not on the hash seed or the clock.
	s, err := New(Options{MaxBytes: 16 << 20, Shards: 1, DefaultTTL: -1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 10_000
	for i := range n {
		if r := svcfuzzDo(s, "PUT", "/v1/entries/k"+strconv.Itoa(i), nil, "v"); r.Code != 204 {
			t.Fatalf("PUT %d: %d", i, r.Code)
		}
	}
	if st := s.Stats().Store; float64(st.IndexBytes) > 22*float64(st.Entries) {
		t.Fatalf("after the PUTs already: index %d bytes for %d entries", st.IndexBytes, st.Entries)
	}
	for i := range n {
		if i%7 == 0 {
			continue
		}
		if r := svcfuzzDo(s, "DELETE", "/v1/entries/k"+strconv.Itoa(i), nil, ""); r.Code != 204 {
			t.Fatalf("DELETE %d: %d", i, r.Code)
		}
	}
	st := s.Stats().Store
	if per := float64(st.IndexBytes) / float64(st.Entries); per > 64 {
		t.Errorf("index of %d bytes for %d live entries: %.1f bytes per live entry; doc.go promises at most 64 after deletions", st.IndexBytes, st.Entries, per)
	}
}

// The default MaxValueBytes is halved until it fits MaxBytes, as its doc
// says: New stopped halving at 1 KiB, so a 2 KiB budget, where a 512-byte
// limit fits with the longest key, was refused blaming max-value-bytes,
// which the caller had not set.
func TestDefaultValueLimitHalvedUntilItFits(t *testing.T) {
	s, err := New(Options{MaxBytes: 2 << 10, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("New with MaxBytes 2 KiB and the default value limit: %v; want the limit halved until it fits (512 does)", err)
	}
	defer s.Close()
	v := s.Options().MaxValueBytes
	if v <= 0 || v >= 1024 {
		t.Fatalf("MaxValueBytes in effect %d", v)
	}
	key := strings.Repeat("k", DefaultMaxKeyBytes)
	if r := svcfuzzDo(s, "PUT", "/v1/entries/"+key, map[string]string{"Cache-TTL": "60"}, strings.Repeat("x", v)); r.Code != 204 {
		t.Errorf("PUT of the largest value under the longest key: %d %s", r.Code, r.Body)
	}
}

// cachekit_store_live_bytes counts the bytes of expired entries not yet
// removed too (bytecache's BytesLive); its help said "Bytes of live
// entries", while the entries gauge beside it says so.
func TestLiveBytesHelpCountsExpired(t *testing.T) {
	clk := newFakeClock()
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Now: clk.now, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 10 {
		if r := svcfuzzDo(s, "PUT", "/v1/entries/k"+strconv.Itoa(i), map[string]string{"Cache-TTL": "1"}, "value"); r.Code != 204 {
			t.Fatalf("PUT: %d", r.Code)
		}
	}
	clk.advance(2 * time.Second)
	// No entry is live any more (a GET of any of them would miss), but
	// none has been read since, so none was removed.
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var help, value string
	sc := bufio.NewScanner(strings.NewReader(rec.Body.String()))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "# HELP cachekit_store_live_bytes "); ok {
			help = v
		}
		if v, ok := strings.CutPrefix(line, "cachekit_store_live_bytes "); ok {
			value = v
		}
	}
	if value != "0" && !strings.Contains(help, "expired") {
		t.Errorf("cachekit_store_live_bytes %s with every entry expired, documented as %q", value, help)
	}
	if r := svcfuzzDo(s, "GET", "/v1/entries/k0", nil, ""); r.Code != 404 {
		t.Fatalf("GET of an expired entry: %d", r.Code)
	}
}
