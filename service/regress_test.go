package service

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// svcfuzzDo serves one request on s directly.
func svcfuzzDo(s *Server, method, target string, header map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// A Content-Type of 254 or 255 bytes, which PUT accepts (the limit is 255),
// is read back (decodeValue once computed its end in byte arithmetic,
// which wrapped to 0 or 1, and GET panicked).
func TestLongContentTypeRoundTrip(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{253, 254, 255} {
		ct := "x/" + strings.Repeat("y", n-2)
		if r := svcfuzzDo(s, "PUT", "/v1/entries/k", map[string]string{"Content-Type": ct}, "v"); r.Code != http.StatusNoContent {
			t.Fatalf("PUT with a Content-Type of %d bytes: %d %s", n, r.Code, r.Body)
		}
		r := svcfuzzDo(s, "GET", "/v1/entries/k", nil, "")
		if r.Code != http.StatusOK || r.Body.String() != "v" || r.Header().Get("Content-Type") != ct {
			t.Errorf("GET after a PUT with a Content-Type of %d bytes: %d %q (Content-Type of %d bytes)", n, r.Code, r.Body, len(r.Header().Get("Content-Type")))
		}
	}
	if p := s.Stats().Panics; p != 0 {
		t.Errorf("%d handler panics", p)
	}
}

// A member name that escapes a lone surrogate is an unknown field, and the
// error says so rather than blaming the message's id.
func TestBadFieldNameError(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := svcfuzzDo(s, "POST", "/v1/entries", map[string]string{"Content-Type": "application/json"}, `{"id":"a","entry":1,"x\ud800":2}`)
	if r.Code != http.StatusBadRequest || strings.Contains(r.Body.String(), `id`) && !strings.Contains(r.Body.String(), "unknown field") {
		t.Errorf("POST with a field name holding a lone surrogate: %d %s; want 400 about an unknown field", r.Code, r.Body)
	}
}
