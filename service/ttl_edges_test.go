package service

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// ttlEdgeServer is a Server with a fake clock, a default TTL of an hour, and a
// control entry "keep" that no refused request may disturb.
func ttlEdgeServer(t *testing.T) (*Server, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, DefaultTTL: time.Hour, Now: clock.now, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if r := ttlEdgeDo(s, "PUT", "/v1/entries/keep", nil, "kept"); r.Code != http.StatusNoContent {
		t.Fatalf("PUT keep: %d %s", r.Code, r.Body)
	}
	return s, clock
}

// ttlEdgeDo serves one request; header values are added in order, so that a
// name given twice makes two header lines, as net/http's server hands them.
func ttlEdgeDo(s *Server, method, target string, header [][2]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for _, h := range header {
		req.Header.Add(h[0], h[1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

func ttlEdgeCheckKeep(t *testing.T, s *Server) {
	t.Helper()
	if r := ttlEdgeDo(s, "GET", "/v1/entries/keep", nil, ""); r.Code != 200 || r.Body.String() != "kept" {
		t.Errorf("control entry after the request: %d %q", r.Code, r.Body)
	}
}

// A TTL of more than 19 digits followed by garbage ("99999999999999999999abc")
// was answered "the TTL exceeds max-ttl" (with a minus sign, "the TTL must
// be positive"): parseTTL took strconv.ParseInt's ErrRange, reported as
// soon as the digits overflow, for a number too large. It is an invalid
// TTL, as "abc" is.
func TestOverflowingGarbageTTLIsInvalid(t *testing.T) {
	s, _ := ttlEdgeServer(t)
	want := string(errBadTTL.body)
	for _, ttl := range []string{"99999999999999999999abc", "-99999999999999999999abc", "99999999999999999999h2"} {
		for _, how := range []string{"header", "query"} {
			var hdr [][2]string
			target := "/v1/entries/keep"
			if how == "header" {
				hdr = [][2]string{{"Cache-TTL", ttl}}
			} else {
				target += "?ttl=" + ttl
			}
			r := ttlEdgeDo(s, "PUT", target, hdr, "new")
			if r.Code != http.StatusBadRequest || r.Body.String() != want {
				t.Errorf("PUT with TTL %q (%s): %d %s, want 400 %s", ttl, how, r.Code, strings.TrimSpace(r.Body.String()), strings.TrimSpace(want))
			}
		}
	}
	ttlEdgeCheckKeep(t, s)
}

// A Cache-TTL header sent as two field lines, an empty one and then "5",
// was read as no TTL (the first line only), so the entry lived DefaultTTL
// instead of 5 seconds; the same field on one line (", 5", which RFC 9110
// section 5.3 says the two lines mean) was a 400. A repeated Cache-TTL is
// now refused.
func TestCacheTTLOnTwoLinesRefused(t *testing.T) {
	s, _ := ttlEdgeServer(t)
	if r := ttlEdgeDo(s, "PUT", "/v1/entries/k", [][2]string{{"Cache-TTL", ", 5"}}, "v"); r.Code != http.StatusBadRequest {
		t.Fatalf("reference: Cache-TTL %q: %d %s, want 400", ", 5", r.Code, r.Body)
	}
	r := ttlEdgeDo(s, "PUT", "/v1/entries/k", [][2]string{{"Cache-TTL", ""}, {"Cache-TTL", "5"}}, "v")
	if r.Code != http.StatusBadRequest || r.Body.String() != string(errTTLRepeated.body) {
		t.Errorf("PUT with Cache-TTL lines %q, %q: %d %s; want 400 %s", "", "5", r.Code, r.Body, errTTLRepeated.body)
	}
	if g := ttlEdgeDo(s, "GET", "/v1/entries/k", nil, ""); g.Code != http.StatusNotFound {
		t.Errorf("the refused PUT stored k: %d %q", g.Code, g.Body)
	}
	ttlEdgeCheckKeep(t, s)
}

// A Cache-TTL header sent twice, "5" and then "abc", was accepted with the
// first line's TTL (the others were never read), where the one-line form
// ("5, abc") is a 400 invalid TTL.
func TestRepeatedMalformedCacheTTLRefused(t *testing.T) {
	s, _ := ttlEdgeServer(t)
	if r := ttlEdgeDo(s, "PUT", "/v1/entries/keep", [][2]string{{"Cache-TTL", "5, abc"}}, "new"); r.Code != http.StatusBadRequest {
		t.Fatalf("reference: Cache-TTL %q: %d %s, want 400", "5, abc", r.Code, r.Body)
	}
	r := ttlEdgeDo(s, "PUT", "/v1/entries/keep", [][2]string{{"Cache-TTL", "5"}, {"Cache-TTL", "abc"}}, "new")
	if r.Code != http.StatusBadRequest {
		t.Errorf("PUT with Cache-TTL lines %q and %q: %d %s, want 400 (as for the one-line %q)", "5", "abc", r.Code, r.Body, "5, abc")
	}
	ttlEdgeCheckKeep(t, s)
}

// The ttl query parameter was found only when its name was spelt
// literally: queryValue decoded the value but not the name, so "?%74tl=5"
// (ttl=5 for url.ParseQuery) was taken for no TTL, and the entry got
// DefaultTTL.
func TestEscapedTTLParameterName(t *testing.T) {
	s, clock := ttlEdgeServer(t)
	target := "/v1/entries/q?%74tl=5"
	if got := httptest.NewRequest("PUT", target, nil).URL.Query().Get("ttl"); got != "5" {
		t.Fatalf("reference: url.ParseQuery gives ttl %q", got)
	}
	r := ttlEdgeDo(s, "PUT", target, nil, "v")
	if r.Code != http.StatusNoContent {
		t.Fatalf("PUT %s: %d %s", target, r.Code, r.Body)
	}
	clock.advance(10 * time.Second)
	if g := ttlEdgeDo(s, "GET", "/v1/entries/q", nil, ""); g.Code != http.StatusNotFound {
		t.Errorf("PUT %s: the entry is alive 10s later (%d %q): the ttl parameter was ignored", target, g.Code, g.Body)
	}
	ttlEdgeCheckKeep(t, s)
}
