package service

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// A request the handler serves after Close (one still running when the
// graceful shutdown timed out, or a handler mounted in another server)
// finds the store closed: a PUT or POST answers 503, and so must a GET,
// HEAD or DELETE, not a 404 saying the key has no entry (the closed store
// merely misses everything), and /healthz must not call it healthy.
func TestReadsAfterCloseAre503(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	do := statusOf(s)
	if code := do("PUT", "/v1/entries/k", "v"); code != 204 {
		t.Fatalf("PUT: %d", code)
	}
	s.Close()
	for _, m := range []string{"PUT", "GET", "HEAD", "DELETE"} {
		if code := do(m, "/v1/entries/k", "v"); code != 503 {
			t.Errorf("%s after Close: %d, want 503", m, code)
		}
	}
	// A batch, even an empty one (which answered 200 {"stored":0}).
	for _, body := range []string{`[]`, `[{"id":"a","entry":1}]`} {
		r := svcfuzzDo(s, "POST", "/v1/entries", map[string]string{"Content-Type": "application/json"}, body)
		if r.Code != 503 {
			t.Errorf("POST %s after Close: %d %q, want 503", body, r.Code, r.Body)
		}
	}
	// Nor may the health check call healthy a server that answers every
	// entry request 503.
	if code := do("GET", "/healthz", ""); code != 503 {
		t.Errorf("GET /healthz after Close: %d, want 503", code)
	}
}

// statusOf returns a function that serves one request through s and
// returns its status code.
func statusOf(s *Server) func(method, path, body string) int {
	return func(method, path, body string) int {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code
	}
}
