package service

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// With a Tier, a request the handler serves after Close must answer 503 as
// it does without one (doc.go: "503 while shutting down (a request that
// reaches the handler after Server.Close)"; Server.Close: "a request served
// after Close ... answers 503"). A GET must not serve the Tier's value, and
// a DELETE must not delete the key from the shared Tier and answer 204.
func TestTierRequestsAfterCloseAre503(t *testing.T) {
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	do := statusOf(s)
	for _, k := range []string{"g", "h", "d"} {
		if code := do("PUT", "/v1/entries/"+k, "v"); code != 204 {
			t.Fatalf("PUT %s: %d", k, code)
		}
	}
	s.Close()
	if code := do("GET", "/v1/entries/g", ""); code != 503 {
		t.Errorf("GET after Close with a Tier holding the key: %d, want 503", code)
	}
	if code := do("HEAD", "/v1/entries/h", ""); code != 503 {
		t.Errorf("HEAD after Close with a Tier holding the key: %d, want 503", code)
	}
	if code := do("DELETE", "/v1/entries/d", ""); code != 503 {
		t.Errorf("DELETE after Close with a Tier holding the key: %d, want 503", code)
	}
	tier.mu.Lock()
	_, still := tier.m["d"]
	tier.mu.Unlock()
	if !still {
		t.Errorf("DELETE after Close deleted the key from the Tier (a request served after Close changed the shared tier)")
	}
}

// onlyReader hides a reader's length from httptest.NewRequest (ContentLength -1).
type onlyReader struct{ r *strings.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// Every documented limit at its edge: the limit itself accepted, one more
// refused with its status, and a refused write keeps the previous value.
func TestLimitEdges(t *testing.T) {
	const maxKey, maxVal, maxBody = 40, 300, 2000
	s, err := New(Options{MaxBytes: 1 << 20, MaxKeyBytes: maxKey, MaxValueBytes: maxVal, MaxBodyBytes: maxBody,
		MaxTTL: 90 * time.Second, DefaultTTL: 10 * time.Second, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	do := func(method, target string, hdr map[string]string, body string, chunked bool) (int, string) {
		var req = httptest.NewRequest(method, target, strings.NewReader(body))
		if chunked {
			req = httptest.NewRequest(method, target, onlyReader{strings.NewReader(body)})
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	for _, chunked := range []bool{false, true} {
		k := strings.Repeat("k", maxKey)
		if c, b := do("PUT", "/v1/entries/"+k, nil, "old", chunked); c != 204 {
			t.Fatalf("PUT key of max: %d %s", c, b)
		}
		if c, _ := do("PUT", "/v1/entries/"+k+"k", nil, "x", chunked); c != 400 {
			t.Errorf("PUT key of max+1: %d", c)
		}
		if c, _ := do("PUT", "/v1/entries/"+k, nil, strings.Repeat("v", maxVal+1), chunked); c != 413 {
			t.Errorf("PUT value of max+1 (chunked %v): %d", chunked, c)
		}
		if c, b := do("GET", "/v1/entries/"+k, nil, "", false); c != 200 || b != "old" {
			t.Errorf("after a refused PUT: %d %q", c, b)
		}
		if c, _ := do("PUT", "/v1/entries/"+k, map[string]string{"Cache-TTL": "91"}, "x", chunked); c != 400 {
			t.Errorf("PUT TTL max+1s: %d", c)
		}
		if c, _ := do("PUT", "/v1/entries/"+k, map[string]string{"Cache-TTL": "90000000001ns"}, "x", chunked); c != 400 {
			t.Errorf("PUT TTL max+1ns: %d", c)
		}
		if c, b := do("GET", "/v1/entries/"+k, nil, "", false); c != 200 || b != "old" {
			t.Errorf("after a refused PUT: %d %q", c, b)
		}
		if c, _ := do("PUT", "/v1/entries/"+k+"?ttl=90", map[string]string{"Content-Type": strings.Repeat("a", 255)}, strings.Repeat("v", maxVal), chunked); c != 204 {
			t.Errorf("PUT value of max, TTL max, CT 255: %d", c)
		}
		// POST: entry of max and max+1, body of max and max+1.
		entry := `"` + strings.Repeat("e", maxVal-2) + `"`
		msg := `{"id":"` + k + `","entry":` + entry + `}`
		if c, b := do("POST", "/v1/entries", jsonCT(), msg, chunked); c != 200 {
			t.Errorf("POST entry of max: %d %s", c, b)
		}
		big := `{"id":"` + k + `","entry":"` + strings.Repeat("e", maxVal-1) + `"}`
		if c, _ := do("POST", "/v1/entries", jsonCT(), big, chunked); c != 413 {
			t.Errorf("POST entry of max+1: %d", c)
		}
		if c, b := do("GET", "/v1/entries/"+k, nil, "", false); c != 200 || b != entry {
			t.Errorf("after a refused POST: %d %q", c, b)
		}
		body := `[` + msg + `]`
		body += strings.Repeat(" ", maxBody-len(body))
		if c, b := do("POST", "/v1/entries", jsonCT(), body, chunked); c != 200 {
			t.Errorf("POST body of max: %d %s", c, b)
		}
		if c, _ := do("POST", "/v1/entries", jsonCT(), body+" ", chunked); c != 413 {
			t.Errorf("POST body of max+1: %d", c)
		}
	}
}
