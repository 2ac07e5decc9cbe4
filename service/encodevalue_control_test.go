package service

import (
	"net/http/httptest"
	"testing"
)

// EncodeValue accepted a content type holding control characters ("a/b\n",
// "a/b\x00"), which no PUT can carry (net/http refuses such a header); a
// preloaded entry then went out with a Content-Type net/http rewrote. It is
// an error now; a tab stays allowed, as in a header.
func TestEncodeValueRefusesControlCharacters(t *testing.T) {
	for _, ct := range []string{"a/b\n", "a/b\r\nX-Injected: 1", "a/b\x00", "a/b\x7f"} {
		if _, err := EncodeValue(nil, ct, []byte("v")); err == nil {
			t.Errorf("EncodeValue(%q) succeeded; want an error", ct)
		}
	}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := EncodeValue(nil, "text/x-a;\tq=1", []byte("v"))
	if err != nil {
		t.Fatalf("a content type with a tab: %v", err)
	}
	if err := s.Store().Set([]byte("k"), v, 0); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/entries/k", nil))
	if got := rec.Header().Get("Content-Type"); rec.Code != 200 || got != "text/x-a;\tq=1" {
		t.Errorf("GET of the preloaded entry: %d, Content-Type %q", rec.Code, got)
	}
}
