package service

import (
	"net/http"
	"testing"
)

// A body with a content coding is refused (415, Accept-Encoding: identity):
// the server does not decode it, and stored as sent it was served back
// still encoded but without its Content-Encoding. A PUT with a
// Content-Range is refused (400): it would store part of a value as the
// whole. Neither changes the store.
func TestEncodedOrPartialBodyRefused(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		method, target string
		header         map[string]string
		body           string
		want           int
	}{
		{"PUT", "/v1/entries/k", map[string]string{"Content-Encoding": "gzip"}, "\x1f\x8b\x08", http.StatusUnsupportedMediaType},
		{"PUT", "/v1/entries/k", map[string]string{"Content-Encoding": "identity, br"}, "x", http.StatusUnsupportedMediaType},
		{"POST", "/v1/entries", map[string]string{"Content-Type": "application/json", "Content-Encoding": "deflate"}, `{"id":"k","entry":1}`, http.StatusUnsupportedMediaType},
		{"PUT", "/v1/entries/k", map[string]string{"Content-Range": "bytes 0-1/10"}, "ab", http.StatusBadRequest},
	} {
		r := svcfuzzDo(s, tc.method, tc.target, tc.header, tc.body)
		if r.Code != tc.want {
			t.Errorf("%s %s %v: %d %s, want %d", tc.method, tc.target, tc.header, r.Code, r.Body, tc.want)
			continue
		}
		if tc.want == http.StatusUnsupportedMediaType && r.Header().Get("Accept-Encoding") != "identity" {
			t.Errorf("%s %v: Accept-Encoding %q, want identity", tc.method, tc.header, r.Header().Get("Accept-Encoding"))
		}
	}
	if r := svcfuzzDo(s, "GET", "/v1/entries/k", nil, ""); r.Code != http.StatusNotFound {
		t.Errorf("GET after refused writes: %d %q, want 404", r.Code, r.Body)
	}
	// Identity is no coding.
	if r := svcfuzzDo(s, "PUT", "/v1/entries/k", map[string]string{"Content-Encoding": "Identity"}, "v"); r.Code != http.StatusNoContent {
		t.Errorf("PUT with Content-Encoding identity: %d %s", r.Code, r.Body)
	}
}
