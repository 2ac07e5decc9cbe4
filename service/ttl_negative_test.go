package service

import (
	"net/http"
	"testing"
)

// A negative TTL is "not positive" whatever its spelling, as a positive one
// too long is "too long" (TestTTLTooLongWhateverItsSpelling). A negative Go
// duration too long for time.Duration ("-3000000h") was called malformed
// (durationOverflows took only a leading '+'), while whole seconds beyond
// int64 ("-99999999999999999999") already said "must be positive".
func TestNegativeTTLNotPositiveWhateverItsSpelling(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := svcfuzzDo(s, "PUT", "/v1/entries/t", map[string]string{"Cache-TTL": "-5s"}, "x")
	if want.Code != http.StatusBadRequest || want.Body.String() != string(errTTLNotPositive.body) {
		t.Fatalf("reference -5s: %d %q", want.Code, want.Body)
	}
	for _, ttl := range []string{"-99999999999999999999", "-3000000h", "-9999999999999999999s", "-2562048h"} {
		r := svcfuzzDo(s, "PUT", "/v1/entries/t", map[string]string{"Cache-TTL": ttl}, "x")
		if r.Code != want.Code || r.Body.String() != want.Body.String() {
			t.Errorf("Cache-TTL %s: %d %q, want %d %q", ttl, r.Code, r.Body, want.Code, want.Body)
		}
	}
	// A sign alone, or two, is malformed, not "not positive".
	for _, ttl := range []string{"-", "-+3000000h", "--3000000h"} {
		r := svcfuzzDo(s, "PUT", "/v1/entries/t", map[string]string{"Cache-TTL": ttl}, "x")
		if r.Code != http.StatusBadRequest || r.Body.String() == want.Body.String() {
			t.Errorf("Cache-TTL %s: %d %q, want 400 calling it malformed", ttl, r.Code, r.Body)
		}
	}
}
