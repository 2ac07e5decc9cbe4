package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/internal/leaktest"
)

// checkLeaks fails the test if goroutines started during it are still
// running once it and its cleanups are over (see leaktest.Check). The
// package's other test files call it too.
var checkLeaks = leaktest.Check

// testServer is a Server serving on 127.0.0.1:0.
type testServer struct {
	*Server
	url    string
	client *http.Client // its own connections
	other  *http.Client // other connections, for reads after writes
	stop   func() error // graceful shutdown; returns Serve's error
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startServer(t *testing.T, o Options, configure ...func(*Server)) *testServer {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range configure {
		f(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	ts := &testServer{
		Server: s,
		url:    "http://" + ln.Addr().String(),
		client: &http.Client{Transport: &http.Transport{}},
		other:  &http.Client{Transport: &http.Transport{}},
	}
	var once sync.Once
	var serveErr error
	first := false
	ts.stop = func() error {
		once.Do(func() {
			first = true
			cancel()
			serveErr = <-done
			ts.client.CloseIdleConnections()
			ts.other.CloseIdleConnections()
			s.Close()
		})
		return serveErr
	}
	t.Cleanup(func() {
		first = false
		if err := ts.stop(); err != nil && first {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// response is what a test request got back.
type response struct {
	status int
	header http.Header
	body   string
}

func (ts *testServer) do(t *testing.T, c *http.Client, method, path string, header map[string]string, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (ts *testServer) req(t *testing.T, method, path string, header map[string]string, body string) response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	return ts.do(t, ts.client, method, path, header, r)
}

func jsonCT() map[string]string { return map[string]string{"Content-Type": "application/json"} }

// fakeClock is a settable clock for the store.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func TestRoutes(t *testing.T) {
	checkLeaks(t)
	clock := newFakeClock()
	ts := startServer(t, Options{MaxBytes: 8 << 20, MaxValueBytes: 64 << 10, DefaultTTL: time.Minute, Now: clock.now})

	expect := func(r response, status int, body string) {
		t.Helper()
		if r.status != status || (body != "*" && r.body != body) {
			t.Fatalf("got %d %q, want %d %q", r.status, r.body, status, body)
		}
	}
	// PUT, GET, HEAD, DELETE.
	expect(ts.req(t, "PUT", "/v1/entries/greeting", nil, "hello"), 204, "")
	r := ts.req(t, "GET", "/v1/entries/greeting", nil, "")
	expect(r, 200, "hello")
	if ct := r.header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("Content-Type %q, want application/octet-stream", ct)
	}
	if d, err := http.ParseTime(r.header.Get("Date")); err != nil || time.Since(d) > time.Minute || len(r.header["Date"]) != 1 {
		t.Errorf("Date %q: %v", r.header["Date"], err)
	}
	r = ts.req(t, "HEAD", "/v1/entries/greeting", nil, "")
	expect(r, 200, "")
	if r.header.Get("Content-Length") != "5" {
		t.Errorf("HEAD: Content-Length %q, want 5", r.header.Get("Content-Length"))
	}
	expect(ts.req(t, "DELETE", "/v1/entries/greeting", nil, ""), 204, "")
	expect(ts.req(t, "GET", "/v1/entries/greeting", nil, ""), 404, "*")
	expect(ts.req(t, "HEAD", "/v1/entries/greeting", nil, ""), 404, "")
	expect(ts.req(t, "DELETE", "/v1/entries/greeting", nil, ""), 404, "*")

	// The Content-Type of a PUT is kept; an empty value is a value.
	expect(ts.req(t, "PUT", "/v1/entries/page", map[string]string{"Content-Type": "text/html; charset=utf-8"}, "<p>hi</p>"), 204, "")
	r = ts.req(t, "GET", "/v1/entries/page", nil, "")
	expect(r, 200, "<p>hi</p>")
	if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q, want text/html; charset=utf-8", ct)
	}
	expect(ts.req(t, "PUT", "/v1/entries/empty", map[string]string{"Content-Type": "application/json"}, ""), 204, "")
	r = ts.req(t, "GET", "/v1/entries/empty", nil, "")
	expect(r, 200, "")
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}

	// A value above 2 KiB (net/http chunks bodies it has not measured).
	big := strings.Repeat("0123456789", 1000)
	expect(ts.req(t, "PUT", "/v1/entries/big", nil, big), 204, "")
	r = ts.req(t, "GET", "/v1/entries/big", nil, "")
	expect(r, 200, big)
	if r.header.Get("Content-Length") != "10000" {
		t.Errorf("Content-Length %q, want 10000", r.header.Get("Content-Length"))
	}

	// Keys may hold slashes, raw or escaped, and any non-control byte.
	expect(ts.req(t, "PUT", "/v1/entries/a/b", nil, "1"), 204, "")
	expect(ts.req(t, "GET", "/v1/entries/a%2Fb", nil, ""), 200, "1")
	expect(ts.req(t, "PUT", "/v1/entries/caf%C3%A9%20%FF", nil, "2"), 204, "")
	expect(ts.req(t, "GET", "/v1/entries/caf%C3%A9%20%FF", nil, ""), 200, "2")
	// An escaped slash belongs to a key, never to the route: these are no
	// requests for keys x and a.
	// (TestBadInput checks the answers.)
	expect(ts.req(t, "PUT", "/v1%2Fentries%2Fx", nil, "3"), 404, "*")
	expect(ts.req(t, "PUT", "/v1/entries%2fx", nil, "3"), 404, "*")
	expect(ts.req(t, "GET", "/v1/entries/x", nil, ""), 404, "*")
	expect(ts.req(t, "GET", "/v1/entries/%61", nil, ""), 404, "*") // an escaped key, "a"
	expect(ts.req(t, "GET", "/v1/entries/a%2F%62", nil, ""), 200, "1")

	// POST one message and an array; entries are stored as raw JSON.
	expect(ts.req(t, "POST", "/v1/entries", jsonCT(), `{"id": "m1", "entry": {"a": [1, 2, {"b": "}"}]}}`), 200, `{"stored":1}`+"\n")
	r = ts.req(t, "GET", "/v1/entries/m1", nil, "")
	expect(r, 200, `{"a": [1, 2, {"b": "}"}]}`)
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("POSTed entry: Content-Type %q, want application/json", ct)
	}
	expect(ts.req(t, "POST", "/v1/entries", map[string]string{"Content-Type": "application/json; charset=utf-8"},
		` [ {"entry": 1, "id": "m2"}, {"id":"m\u0033","entry":"x\"y"} , {"id":"m4","entry":null} ] `), 200, `{"stored":3}`+"\n")
	expect(ts.req(t, "GET", "/v1/entries/m2", nil, ""), 200, "1")
	expect(ts.req(t, "GET", "/v1/entries/m3", nil, ""), 200, `"x\"y"`)
	expect(ts.req(t, "GET", "/v1/entries/m4", nil, ""), 200, "null")
	expect(ts.req(t, "POST", "/v1/entries", jsonCT(), `[]`), 200, `{"stored":0}`+"\n")

	// TTLs: the default, the header (seconds or a duration), the query.
	expect(ts.req(t, "PUT", "/v1/entries/t-default", nil, "x"), 204, "")
	expect(ts.req(t, "PUT", "/v1/entries/t-header", map[string]string{"Cache-TTL": "30"}, "x"), 204, "")
	expect(ts.req(t, "PUT", "/v1/entries/t-query?ttl=2m", nil, "x"), 204, "")
	expect(ts.req(t, "POST", "/v1/entries?x=1&ttl=90s", jsonCT(), `{"id":"t-post","entry":1}`), 200, "*")
	expect(ts.req(t, "PUT", "/v1/entries/t-both?ttl=1h", map[string]string{"Cache-TTL": "10s"}, "x"), 204, "")
	alive := func(want ...string) {
		t.Helper()
		for _, k := range []string{"t-both", "t-header", "t-default", "t-post", "t-query"} {
			got := ts.req(t, "GET", "/v1/entries/"+k, nil, "").status == 200
			if got != (len(want) > 0 && slicesContains(want, k)) {
				t.Errorf("%s alive: %v, want %v", k, got, !got)
			}
		}
	}
	alive("t-both", "t-header", "t-default", "t-post", "t-query")
	clock.advance(10 * time.Second) // the header wins over the query: t-both lives 10s
	alive("t-header", "t-default", "t-post", "t-query")
	clock.advance(20 * time.Second)
	alive("t-default", "t-post", "t-query")
	clock.advance(30 * time.Second)
	alive("t-post", "t-query")
	clock.advance(30 * time.Second)
	alive("t-query")
	clock.advance(30 * time.Second)
	alive()

	// Stats, health, metrics.
	r = ts.req(t, "GET", "/v1/stats", nil, "")
	expect(r, 200, "*")
	var st Stats
	if err := json.Unmarshal([]byte(r.body), &st); err != nil {
		t.Fatalf("stats: %v\n%s", err, r.body)
	}
	if st.Store.Expirations != 5 || st.Store.Deletes != 1 || st.EntriesStored != 15 ||
		st.Requests["entry_put"]["204"] != 10 || st.Requests["entry_get"]["404"] == 0 || st.Requests["entries_post"]["200"] != 4 {
		t.Errorf("stats: %s", r.body)
	}
	if st.Store.ChunkBytes <= 0 || st.Store.ChunkBytes > st.Store.BytesMax || st.Runtime.Goroutines == 0 {
		t.Errorf("stats: %+v", st)
	}
	expect(ts.req(t, "GET", "/healthz", nil, ""), 200, `{"status":"ok"}`+"\n")
	r = ts.req(t, "GET", "/metrics", nil, "")
	expect(r, 200, "*")
	checkPrometheus(t, r.body)
	for _, want := range []string{
		`cachekit_http_requests_total{route="entry_put",code="204"} 10`,
		`cachekit_store_expirations_total 5`,
		`cachekit_http_request_duration_seconds_count{route="entry_get"} `,
		`go_goroutines `,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// checkPrometheus checks the text exposition format line by line: comments
// are HELP or TYPE, every sample is name{labels} value with a declared
// family.
func checkPrometheus(t *testing.T, body string) {
	t.Helper()
	sample := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*\})? (\S+)$`)
	types := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			types[name] = typ
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		m := sample.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("metrics: bad line %q", line)
			continue
		}
		if _, err := strconv.ParseFloat(m[4], 64); err != nil {
			t.Errorf("metrics: bad value in %q", line)
		}
		name := m[1]
		family := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && types[base] == "histogram" {
				family = base
			}
		}
		if types[family] == "" {
			t.Errorf("metrics: %q has no TYPE", line)
		}
	}
}

func TestBadInput(t *testing.T) {
	checkLeaks(t)
	ts := startServer(t, Options{MaxBytes: 8 << 20, MaxKeyBytes: 64, MaxValueBytes: 100, MaxBodyBytes: 1000})
	// A control entry that no bad request may disturb.
	if r := ts.req(t, "PUT", "/v1/entries/keep", nil, "kept"); r.status != 204 {
		t.Fatal(r)
	}
	chunked := func(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) } // no length known
	long := strings.Repeat("v", 101)
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		header  map[string]string
		body    io.Reader
		status  int
		allow   string
		stored  []string // keys that must not exist afterwards
		errPart string
	}{
		{name: "empty key", method: "GET", path: "/v1/entries/", status: 400, errPart: "empty"},
		{name: "empty key put", method: "PUT", path: "/v1/entries/", body: strings.NewReader("x"), status: 400},
		{name: "key too long", method: "GET", path: "/v1/entries/" + strings.Repeat("k", 65), status: 400, errPart: "longer"},
		{name: "key at the limit", method: "GET", path: "/v1/entries/" + strings.Repeat("k", 64), status: 404},
		{name: "NUL in key", method: "PUT", path: "/v1/entries/a%00b", body: strings.NewReader("x"), status: 400, errPart: "control"},
		{name: "newline in key", method: "GET", path: "/v1/entries/a%0Ab", status: 400},
		{name: "DEL in key", method: "DELETE", path: "/v1/entries/a%7Fb", status: 400},
		{name: "value too large", method: "PUT", path: "/v1/entries/big", body: strings.NewReader(long), status: 413, stored: []string{"big"}},
		{name: "value too large chunked", method: "PUT", path: "/v1/entries/big", body: chunked(long), status: 413, stored: []string{"big"}},
		{name: "value at the limit chunked", method: "PUT", path: "/v1/entries/fits", body: chunked(long[:100]), status: 204},
		{name: "ttl not a duration", method: "PUT", path: "/v1/entries/t?ttl=soon", body: strings.NewReader("x"), status: 400, stored: []string{"t"}},
		{name: "ttl badly escaped", method: "PUT", path: "/v1/entries/t?ttl=%zz", body: strings.NewReader("x"), status: 400, stored: []string{"t"}},
		{name: "ttl zero", method: "PUT", path: "/v1/entries/t?ttl=0", body: strings.NewReader("x"), status: 400, stored: []string{"t"}},
		{name: "ttl negative", method: "PUT", path: "/v1/entries/t", header: map[string]string{"Cache-TTL": "-5s"}, body: strings.NewReader("x"), status: 400, stored: []string{"t"}},
		{name: "ttl too long", method: "PUT", path: "/v1/entries/t", header: map[string]string{"Cache-TTL": "99999999999999"}, body: strings.NewReader("x"), status: 400, stored: []string{"t"}},
		{name: "content type too long", method: "PUT", path: "/v1/entries/t", header: map[string]string{"Content-Type": "x/" + strings.Repeat("y", 300)}, body: strings.NewReader("x"), status: 400, stored: []string{"t"}},
		{name: "post without content type", method: "POST", path: "/v1/entries", body: strings.NewReader(`{"id":"p","entry":1}`), status: 415, stored: []string{"p"}},
		{name: "post text", method: "POST", path: "/v1/entries", header: map[string]string{"Content-Type": "text/plain"}, body: strings.NewReader(`{"id":"p","entry":1}`), status: 415, stored: []string{"p"}},
		{name: "malformed JSON", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p","entry":`), status: 400, errPart: "malformed"},
		{name: "trailing JSON", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p","entry":1} {"id":"q","entry":2}`), status: 400, stored: []string{"p", "q"}},
		{name: "trailing garbage", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p","entry":1}x`), status: 400, stored: []string{"p"}},
		{name: "empty body", method: "POST", path: "/v1/entries", header: jsonCT(), status: 400},
		{name: "not an object", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`"p"`), status: 400},
		{name: "array of numbers", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`[1]`), status: 400},
		{name: "no id", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"entry":1}`), status: 400},
		{name: "no entry", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p"}`), status: 400, stored: []string{"p"}},
		{name: "unknown field", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p","entry":1,"ttl":5}`), status: 400, stored: []string{"p"}},
		{name: "duplicate field", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p","id":"q","entry":1}`), status: 400, stored: []string{"p", "q"}},
		{name: "numeric id", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":7,"entry":1}`), status: 400, stored: []string{"7"}},
		{name: "empty id", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"","entry":1}`), status: 400},
		{name: "id not UTF-8", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader("{\"id\":\"\xff\",\"entry\":1}"), status: 400, stored: []string{"\xff", "\ufffd"}},
		{name: "id with a lone surrogate", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"a\ud800","entry":1}`), status: 400, stored: []string{"a\ufffd"}},
		{name: "control character in id", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"a\u0001b","entry":1}`), status: 400},
		{name: "id too long", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"` + strings.Repeat("k", 65) + `","entry":1}`), status: 400},
		{name: "entry too large", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`{"id":"p","entry":"` + long + `"}`), status: 413, stored: []string{"p"}},
		{name: "body too large", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`[` + strings.Repeat(`{"id":"p","entry":1},`, 60) + `{"id":"p","entry":1}]`), status: 413, stored: []string{"p"}},
		{name: "body too large chunked", method: "POST", path: "/v1/entries", header: jsonCT(), body: chunked(`[` + strings.Repeat(`{"id":"p","entry":1},`, 60) + `{"id":"p","entry":1}]`), status: 413, stored: []string{"p"}},
		{name: "one bad message stores nothing", method: "POST", path: "/v1/entries", header: jsonCT(), body: strings.NewReader(`[{"id":"p","entry":1},{"id":"q"}]`), status: 400, stored: []string{"p", "q"}},
		{name: "unknown route", method: "GET", path: "/v2/entries/x", status: 404, errPart: "no such route"},
		{name: "escaped slash in the route", method: "GET", path: "/v1%2Fentries/x", status: 404, errPart: "no such route"},
		{name: "escaped slash before the key", method: "PUT", path: "/v1/entries%2Fx", status: 404, errPart: "no such route"},
		{name: "root", method: "GET", path: "/", status: 404},
		{name: "prefix without slash", method: "GET", path: "/v1/entriesx", status: 404},
		{name: "stats with slash", method: "GET", path: "/v1/stats/", status: 404},
		{name: "POST to a key", method: "POST", path: "/v1/entries/k", header: jsonCT(), body: strings.NewReader(`{}`), status: 405, allow: "GET, HEAD, PUT, DELETE"},
		{name: "PATCH", method: "PATCH", path: "/v1/entries/k", body: strings.NewReader(`x`), status: 405, allow: "GET, HEAD, PUT, DELETE"},
		{name: "GET the collection", method: "GET", path: "/v1/entries", status: 405, allow: "POST"},
		{name: "DELETE stats", method: "DELETE", path: "/v1/stats", status: 405, allow: "GET, HEAD"},
		{name: "PUT healthz", method: "PUT", path: "/healthz", body: strings.NewReader(`x`), status: 405, allow: "GET, HEAD"},
		{name: "POST metrics", method: "POST", path: "/metrics", status: 405, allow: "GET, HEAD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, ts.client, tc.method, tc.path, tc.header, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d (%s), want %d", r.status, r.body, tc.status)
			}
			if tc.status >= 400 && tc.method != "HEAD" {
				var e struct {
					Error  string `json:"error"`
					Status int    `json:"status"`
				}
				if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Status != tc.status || e.Error == "" ||
					r.header.Get("Content-Type") != "application/json" {
					t.Errorf("error body %q (%s, %v): want JSON with error and status", r.body, r.header.Get("Content-Type"), err)
				}
				if !strings.Contains(e.Error, tc.errPart) {
					t.Errorf("error %q does not mention %q", e.Error, tc.errPart)
				}
			}
			if r.header.Get("Allow") != tc.allow {
				t.Errorf("Allow %q, want %q", r.header.Get("Allow"), tc.allow)
			}
			for _, k := range tc.stored {
				if r := ts.req(t, "GET", "/v1/entries/"+k, nil, ""); r.status != 404 {
					t.Errorf("%s was stored by a refused request", k)
				}
			}
		})
	}
	// Headers beyond MaxHeaderBytes: net/http's own 431.
	r := ts.req(t, "GET", "/v1/entries/keep", map[string]string{"X-Big": strings.Repeat("h", 128<<10)}, "")
	if r.status != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("huge header: %d, want 431", r.status)
	}
	if r := ts.req(t, "GET", "/v1/entries/keep", nil, ""); r.status != 200 || r.body != "kept" {
		t.Errorf("the control entry: %d %q", r.status, r.body)
	}
	st := ts.Stats()
	for route, codes := range st.Requests {
		if codes["500"] > 0 {
			t.Errorf("%s answered 500", route)
		}
	}
	if st.Panics != 0 {
		t.Errorf("%d panics", st.Panics)
	}
}

func TestReadYourWritesConcurrent(t *testing.T) {
	checkLeaks(t)
	// No TTL and room for everything: every write must be read back.
	ts := startServer(t, Options{MaxBytes: 32 << 20, MaxValueBytes: 4 << 10, DefaultTTL: -1})
	const workers, writes = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				// Own keys, rewritten; and a key shared by all workers,
				// whose value must be one of this round's or newer.
				key := fmt.Sprintf("w%d-k%d", w, i%10)
				val := fmt.Sprintf("w%d-v%d", w, i)
				var resp response
				if i%2 == 0 {
					resp = ts.do(t, ts.client, "PUT", "/v1/entries/"+key, nil, strings.NewReader(val))
				} else {
					resp = ts.do(t, ts.client, "POST", "/v1/entries", jsonCT(),
						strings.NewReader(fmt.Sprintf(`{"id":%q,"entry":%q}`, key, val)))
					val = strconv.Quote(val)
				}
				if resp.status/100 != 2 {
					errs <- fmt.Errorf("write %s: %d %s", key, resp.status, resp.body)
					return
				}
				got := ts.do(t, ts.other, "GET", "/v1/entries/"+key, nil, nil)
				if got.status != 200 || got.body != val {
					errs <- fmt.Errorf("read %s after writing %s: %d %q", key, val, got.status, got.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := ts.Stats(); st.Store.Evictions != 0 || st.Store.Expirations != 0 {
		t.Errorf("evictions %d, expirations %d", st.Store.Evictions, st.Store.Expirations)
	}
}

// TestEvictionIsCounted fills a small store beyond its budget: the oldest
// entries go, each eviction is counted, the newest entries are all there,
// and the chunks never exceed the budget.
func TestEvictionIsCounted(t *testing.T) {
	checkLeaks(t)
	ts := startServer(t, Options{MaxBytes: 64 << 10, Shards: 1, MaxValueBytes: 1024, MaxKeyBytes: 64, DefaultTTL: -1})
	val := strings.Repeat("x", 100)
	const n = 2000 // about 230 KB of entries
	for i := range n {
		if r := ts.req(t, "PUT", fmt.Sprintf("/v1/entries/k%d", i), nil, val); r.status != 204 {
			t.Fatal(r)
		}
	}
	st := ts.Stats()
	if st.Store.ChunkBytes > 64<<10 || st.Store.Evictions == 0 || st.Store.Evictions+st.Store.Entries != n {
		t.Fatalf("store after %d writes: %+v", n, st.Store)
	}
	live := 0
	for i := n - 1; i >= 0; i-- {
		if ts.req(t, "GET", fmt.Sprintf("/v1/entries/k%d", i), nil, "").status != 200 {
			break
		}
		live++
	}
	if uint64(live) != st.Store.Entries {
		t.Errorf("the newest %d entries are readable, the store holds %d", live, st.Store.Entries)
	}
}

func TestGracefulShutdown(t *testing.T) {
	checkLeaks(t)
	// entered: the request is in the handler (a ConnState hook would be too
	// early: net/http drops a request whose headers it read just before
	// shutdown began). shuttingDown: Shutdown has been called.
	entered := make(chan struct{}, 1)
	shuttingDown := make(chan struct{})
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024}, func(s *Server) {
		s.entered = func(*http.Request) { entered <- struct{}{} }
		s.shutdown = func() { close(shuttingDown) }
	})
	addr := strings.TrimPrefix(ts.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Half a request: headers and 5 of its 10 body bytes.
	if _, err := io.WriteString(conn, "PUT /v1/entries/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello"); err != nil {
		t.Fatal(err)
	}
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- ts.stop() }()
	<-shuttingDown
	// The listener is closed once Shutdown has begun.
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("the listener still accepts connections during shutdown")
	}
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	default:
	}
	if _, err := io.WriteString(conn, "world"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("the request in flight got %d, want 204", resp.StatusCode)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestShutdownTimeout(t *testing.T) {
	checkLeaks(t)
	entered := make(chan struct{}, 1)
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, ShutdownTimeout: 50 * time.Millisecond}, func(s *Server) {
		s.entered = func(*http.Request) { entered <- struct{}{} }
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "PUT /v1/entries/never HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
	<-entered
	err = ts.stop()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve: %v, want a shutdown timeout", err)
	}
	// The connection was closed.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the connection is still open")
	}
}

// mapTier is a Tier in a map, with a switch to make it fail.
type mapTier struct {
	mu   sync.Mutex
	m    map[string][]byte
	ttl  map[string]time.Duration
	fail bool
	sets int
}

var errTierDown = errors.New("tier down")

func (m *mapTier) Get(_ context.Context, dst, key []byte) ([]byte, time.Duration, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return dst, 0, false, errTierDown
	}
	v, ok := m.m[string(key)]
	return append(dst, v...), m.ttl[string(key)], ok, nil
}

func (m *mapTier) Set(_ context.Context, key, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errTierDown
	}
	m.sets++
	m.m[string(key)] = bytes.Clone(value)
	m.ttl[string(key)] = ttl
	return nil
}

func (m *mapTier) Delete(_ context.Context, key []byte) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return false, errTierDown
	}
	_, ok := m.m[string(key)]
	delete(m.m, string(key))
	return ok, nil
}

func TestTier(t *testing.T) {
	checkLeaks(t)
	tier := &mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}
	clock := newFakeClock()
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier, Now: clock.now})

	// Writes go through to the tier, with their TTL.
	ts.req(t, "PUT", "/v1/entries/a?ttl=30", map[string]string{"Content-Type": "text/x-a"}, "A")
	ts.req(t, "POST", "/v1/entries", jsonCT(), `{"id":"b","entry":[1]}`)
	if tier.sets != 2 || tier.ttl["a"] != 30*time.Second || tier.ttl["b"] != DefaultTTL {
		t.Fatalf("tier after 2 writes: %d sets, TTLs %v", tier.sets, tier.ttl)
	}
	// A local miss is served from the tier, with its Content-Type, and cached locally.
	if !ts.Invalidate([]byte("a")) {
		t.Fatal("Invalidate: a was not in the store")
	}
	r := ts.req(t, "GET", "/v1/entries/a", nil, "")
	if r.status != 200 || r.body != "A" || r.header.Get("Content-Type") != "text/x-a" {
		t.Fatalf("tier hit: %+v", r)
	}
	if v, ok := ts.Store().Get(nil, []byte("a")); !ok || string(v[2+len("text/x-a"):]) != "A" {
		t.Errorf("the tier's hit was not put in the store: %q", v)
	}
	// Delete removes from both.
	if r := ts.req(t, "DELETE", "/v1/entries/b", nil, ""); r.status != 204 {
		t.Fatal(r)
	}
	if _, ok := tier.m["b"]; ok || ts.req(t, "GET", "/v1/entries/b", nil, "").status != 404 {
		t.Error("b survived its deletion")
	}
	// A failing tier: writes still succeed locally, reads of local
	// entries still work, misses are misses; errors are counted.
	tier.mu.Lock()
	tier.fail = true
	tier.mu.Unlock()
	if r := ts.req(t, "PUT", "/v1/entries/c", nil, "C"); r.status != 204 {
		t.Errorf("write with the tier down: %d", r.status)
	}
	if r := ts.req(t, "GET", "/v1/entries/c", nil, ""); r.status != 200 || r.body != "C" {
		t.Errorf("local read with the tier down: %+v", r)
	}
	if r := ts.req(t, "GET", "/v1/entries/zz", nil, ""); r.status != 404 {
		t.Errorf("miss with the tier down: %d", r.status)
	}
	st := ts.Stats()
	if st.Tier == nil || st.Tier.Hits != 1 || st.Tier.Errors != 2 || st.Tier.Misses != 1 {
		t.Errorf("tier stats %+v", st.Tier)
	}
}

// TestHotPathAllocations pins the handler's allocations for a GET hit, a
// GET miss and a PUT: none (net/http's own, per request, are not counted).
func TestHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w := &nullWriter{h: http.Header{}}
	value := bytes.Repeat([]byte("v"), 500)
	body := bytes.NewReader(value)
	put, _ := http.NewRequest("PUT", "http://x/v1/entries/some-key", io.NopCloser(body))
	put.ContentLength = int64(len(value))
	get, _ := http.NewRequest("GET", "http://x/v1/entries/some-key", nil)
	miss, _ := http.NewRequest("GET", "http://x/v1/entries/no-such-key", nil)
	for _, tc := range []struct {
		name  string
		r     *http.Request
		reset func()
		code  int
	}{
		{"put", put, func() { body.Reset(value) }, 204},
		{"get", get, func() {}, 200},
		{"miss", miss, func() {}, 404},
	} {
		name := tc.name
		tc.reset()
		s.ServeHTTP(w, tc.r)
		if w.code != tc.code {
			t.Fatalf("%s: %d, want %d", name, w.code, tc.code)
		}
		if n := testing.AllocsPerRun(1000, func() { tc.reset(); s.ServeHTTP(w, tc.r) }); n != 0 {
			t.Errorf("%s: %.1f allocations per request, want 0", name, n)
		}
	}
}

// nullWriter is a ResponseWriter that keeps its header map.
type nullWriter struct {
	h    http.Header
	code int
}

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nullWriter) WriteHeader(code int)        { w.code = code }

// failingListener accepts one connection, then fails for good once fail
// is closed.
type failingListener struct {
	net.Listener
	accepted atomic.Bool
	fail     chan struct{}
}

func (l *failingListener) Accept() (net.Conn, error) {
	if !l.accepted.Swap(true) {
		return l.Listener.Accept()
	}
	<-l.fail
	return nil, errors.New("listener broken")
}

// When its listener fails, Serve returns the error and stops serving the
// connections it had accepted: a kept-alive connection is not served
// after Serve has returned.
func TestServeListenerFailure(t *testing.T) {
	checkLeaks(t)
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &failingListener{Listener: inner, fail: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background(), ln) }()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	url := "http://" + inner.Addr().String() + "/healthz"
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	close(ln.fail)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "listener broken") {
		t.Fatalf("Serve = %v; want the listener's error", err)
	}
	if resp, err := c.Get(url); err == nil {
		resp.Body.Close()
		t.Fatalf("served after Serve returned: %d", resp.StatusCode)
	}
}

// panickyTier panics in Get.
type panickyTier struct{ mapTier }

func (*panickyTier) Get(context.Context, []byte, []byte) ([]byte, time.Duration, bool, error) {
	panic("tier bug")
}

// A panic in a handler (here in a Tier that the GET calls) is a logged,
// counted 500 under the handler's route; the server goes on serving.
func TestHandlerPanic(t *testing.T) {
	checkLeaks(t)
	tier := &panickyTier{mapTier{m: map[string][]byte{}, ttl: map[string]time.Duration{}}}
	ts := startServer(t, Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: tier})
	if r := ts.req(t, "GET", "/v1/entries/k", nil, ""); r.status != 500 || !strings.Contains(r.body, "internal error") {
		t.Fatalf("GET: %d %q; want a 500", r.status, r.body)
	}
	if r := ts.req(t, "PUT", "/v1/entries/k", nil, "v"); r.status != 204 {
		t.Fatalf("PUT after the panic: %d %q", r.status, r.body)
	}
	st := ts.Stats()
	if st.Panics != 1 || st.Requests["entry_get"]["500"] != 1 || st.Requests["other"]["500"] != 0 {
		t.Errorf("panics %d, requests %v; want 1 panic, counted as entry_get's 500", st.Panics, st.Requests)
	}
}
