package service

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A POST body of MaxBodyBytes costs its body, not several times it: the
// package documentation bounds a request's memory by its body (at most
// MaxBodyBytes for a POST) plus pooled scratch buffers of at most 64 KiB.
func TestPostMemoryBoundedByBody(t *testing.T) {
	const limit = 1 << 20
	s, err := New(Options{MaxBytes: 64 << 20, MaxValueBytes: 1024, MaxBodyBytes: limit, DefaultTTL: -1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The smallest messages: 21 bytes each.
	msg := `{"id":"a","entry":0},`
	n := (limit - 2) / len(msg)
	body := []byte("[" + strings.Repeat(msg, n-1) + `{"id":"a","entry":0}]`)
	req, _ := http.NewRequest("POST", "http://x/v1/entries", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := &nullWriter{h: http.Header{}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s.ServeHTTP(w, req)
	runtime.ReadMemStats(&after)
	if w.code != 0 && w.code != 200 {
		t.Fatalf("status %d", w.code)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 2*uint64(len(body)) {
		t.Errorf("a POST of a %d-byte body allocated %d bytes (%.1fx the body)", len(body), alloc, float64(alloc)/float64(len(body)))
	}
}

// An entry is served as application/json, so it must be JSON: a body whose
// strings hold bytes that are not UTF-8 (which JSON does not allow, and
// which encoding/json's Valid does not check) is refused, like an id.
func TestPostEntryNotUTF8(t *testing.T) {
	checkLeaks(t)
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024})
	r := ts.req(t, "POST", "/v1/entries", jsonCT(), "{\"id\":\"u\",\"entry\":\"caf\xe9\"}")
	if r.status != 400 {
		t.Errorf("POST of an entry that is not UTF-8: %d %q, want 400", r.status, r.body)
	}
	if g := ts.req(t, "GET", "/v1/entries/u", nil, ""); g.status == 200 && !utf8.ValidString(g.body) {
		t.Errorf("GET serves %q as %s: not JSON (not UTF-8)", g.body, g.header.Get("Content-Type"))
	}
}

// A body that the client does not finish sending within ReadTimeout is a
// request timeout (408, which statusCodes counts), not a bad body (400).
func TestBodyReadTimeoutIs408(t *testing.T) {
	checkLeaks(t)
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, ReadTimeout: 100 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 5 of the 10 body bytes, then nothing: the server's read deadline passes.
	io.WriteString(conn, "PUT /v1/entries/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("body read timeout: %d %s, want 408", resp.StatusCode, b)
	}
	if st := ts.Stats(); st.Requests["entry_put"]["408"] != 1 {
		t.Errorf("requests %v, want entry_put's 408 counted", st.Requests)
	}
}

// A TTL beyond MaxTTL is reported as such whatever its spelling: whole
// seconds too large for int64 or a Go duration too large for
// time.Duration are as "too long" as 99999999999999 seconds is.
func TestTTLTooLongWhateverItsSpelling(t *testing.T) {
	checkLeaks(t)
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024})
	want := ts.req(t, "PUT", "/v1/entries/t", map[string]string{"Cache-TTL": "99999999999999"}, "x")
	if want.status != 400 || !strings.Contains(want.body, "exceeds max-ttl") {
		t.Fatalf("reference: %d %q", want.status, want.body)
	}
	for _, ttl := range []string{"99999999999999999999", "3000000h", "9999999999999999999s"} {
		r := ts.req(t, "PUT", "/v1/entries/t", map[string]string{"Cache-TTL": ttl}, "x")
		if r.body != want.body {
			t.Errorf("TTL %s: %d %q, want %q", ttl, r.status, r.body, want.body)
		}
	}
}

// An empty Cache-TTL header is no TTL: the ttl query parameter then
// applies (the header wins only when it gives one).
func TestEmptyTTLHeaderFallsBackToQuery(t *testing.T) {
	checkLeaks(t)
	clock := newFakeClock()
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, DefaultTTL: time.Hour, Now: clock.now})
	if r := ts.req(t, "PUT", "/v1/entries/e?ttl=10s", map[string]string{"Cache-TTL": ""}, "x"); r.status != 204 {
		t.Fatal(r)
	}
	clock.advance(20 * time.Second)
	if r := ts.req(t, "GET", "/v1/entries/e", nil, ""); r.status != 404 {
		t.Errorf("?ttl=10s with an empty Cache-TTL header: alive after 20s (%d): the query's TTL was ignored", r.status)
	}
	// And an empty header does not hide a bad query parameter.
	if r := ts.req(t, "PUT", "/v1/entries/e?ttl=soon", map[string]string{"Cache-TTL": ""}, "x"); r.status != 400 {
		t.Errorf("?ttl=soon with an empty Cache-TTL header: %d, want 400", r.status)
	}
}

// panickyWriter panics the first time a body is written to it.
type panickyWriter struct {
	nullWriter
	panicked bool
}

func (w *panickyWriter) Write(p []byte) (int, error) {
	if !w.panicked {
		w.panicked = true
		panic("writer bug")
	}
	return len(p), nil
}

// dispatch promises that a handler's panic is counted under its route;
// /healthz and /metrics set theirs only after running.
func TestPanicCountedUnderHealthAndMetrics(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, path := range []string{"/healthz", "/metrics", "/v1/stats"} {
		r, _ := http.NewRequest("GET", "http://x"+path, nil)
		s.ServeHTTP(&panickyWriter{nullWriter: nullWriter{h: http.Header{}}}, r)
	}
	st := s.Stats()
	b, _ := json.Marshal(st.Requests)
	if st.Requests["healthz"]["500"] != 1 || st.Requests["metrics"]["500"] != 1 || st.Requests["other"]["500"] != 0 {
		t.Errorf("requests %s: want each panic under its route", b)
	}
}

// Every key that the server accepts can be addressed: a key POSTed as an
// id, within MaxKeyBytes, must be readable and deletable through its URL,
// percent-encoded (up to 3 bytes per key byte), within MaxHeaderBytes.
func TestLongKeyAddressable(t *testing.T) {
	checkLeaks(t)
	ts := startServer(t, Options{MaxBytes: 8 << 20, MaxKeyBytes: 30000, MaxValueBytes: 1024})
	key := strings.Repeat("é", 15000) // 30000 bytes
	if r := ts.req(t, "POST", "/v1/entries", jsonCT(), `{"id":"`+key+`","entry":1}`); r.status != 200 {
		t.Fatalf("POST: %d %s", r.status, r.body)
	}
	path := "/v1/entries/" + strings.ReplaceAll(key, "é", "%C3%A9")
	if r := ts.req(t, "GET", path, nil, ""); r.status != 200 {
		t.Errorf("GET of a stored key of %d bytes: %d %q", len(key), r.status, r.body)
	}
	if r := ts.req(t, "DELETE", path, nil, ""); r.status != 204 {
		t.Errorf("DELETE of a stored key of %d bytes: %d %q", len(key), r.status, r.body)
	}
}
