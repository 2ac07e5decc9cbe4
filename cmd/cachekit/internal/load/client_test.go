package load

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServer answers every request on a TCP listener with the bytes reply
// returns, then closes the connection if it says so.
func rawServer(t *testing.T, reply func(n int, r *http.Request) (resp string, closeConn bool)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					mu.Lock()
					n++
					resp, closeConn := reply(n, req)
					mu.Unlock()
					if _, err := io.WriteString(c, resp); err != nil || closeConn {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

func TestRawClientResponses(t *testing.T) {
	checkLeaks(t)
	for _, tc := range []struct {
		name      string
		reply     func(n int, r *http.Request) (string, bool)
		wantErrs  int64
		wantKind  string
		wantConns bool // a new connection per request
	}{
		{name: "content length", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false
		}},
		{name: "chunked with trailer", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", false
		}},
		{name: "until close", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 200 OK\r\n\r\nhello", true
		}},
		{name: "HTTP/1.0", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", true
		}},
		{name: "connection close", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", true
		}},
		{name: "interim response", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false
		}},
		// The server drops the connection after each response without
		// saying so: the next request on it is sent again on a new one.
		{name: "silently closed", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true
		}},
		{name: "malformed", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 OK\r\n\r\n", true
		}, wantErrs: 20, wantKind: "other"},
		{name: "cut short", reply: func(int, *http.Request) (string, bool) {
			return "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", true
		}, wantErrs: 20, wantKind: "connection closed"},
		{name: "status", reply: func(n int, _ *http.Request) (string, bool) {
			if n%2 == 0 {
				return "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n", false
			}
			return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false
		}, wantErrs: 10, wantKind: "status 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := rawServer(t, tc.reply)
			rep, err := Run(context.Background(), Options{URL: url + "/x", Mode: ModeGet, Requests: 20, Concurrency: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != 20 || rep.Errors != tc.wantErrs {
				t.Fatalf("%d requests, %d errors %v; want 20 and %d", rep.Requests, rep.Errors, rep.ErrorKinds, tc.wantErrs)
			}
			if tc.wantKind != "" && (rep.ErrorKinds[tc.wantKind] == nil || rep.ErrorKinds[tc.wantKind].Count != tc.wantErrs) {
				t.Errorf("errors %v, want %d of kind %q", rep.ErrorKinds, tc.wantErrs, tc.wantKind)
			}
		})
	}
}

// TestRawClientRequests checks what the built-in client sends, and that
// large values read back in chunks pass the RYW check.
func TestRawClientRequests(t *testing.T) {
	checkLeaks(t)
	s, srv := newAPIServer(t)
	rep, err := Run(context.Background(), Options{
		URL: srv.URL + "/", Requests: 200, Concurrency: 2, WriteRatio: 0.5, WriteMethod: WritePut,
		ValueSize: 5000, RYW: true, TTL: 90_000_000_000, Seed: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 || rep.RYW.Checks != rep.Writes || rep.RYW.Missing+rep.RYW.Mismatch+rep.RYW.Errors != 0 {
		t.Fatalf("errors %v, RYW %+v after %d writes", rep.ErrorKinds, rep.RYW, rep.Writes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.entries {
		if len(v) != 5000 {
			t.Fatalf("%s: %d bytes stored, want 5000", k, len(v))
		}
	}

	// Headers: Host, Content-Type, Cache-TTL, Content-Length; a base path
	// prefix; {key} in get mode, in the path and the query.
	var mu sync.Mutex
	var seen []string
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Host+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("Cache-TTL"))
		mu.Unlock()
	}))
	defer h.Close()
	host := strings.TrimPrefix(h.URL, "http://")
	for _, o := range []Options{
		{URL: h.URL + "/prefix/", Requests: 1, WriteRatio: 1, TTL: 90_000_000_000, Sequential: true},
		{URL: h.URL + "/prefix", Requests: 1, WriteRatio: 1, WriteMethod: WritePut, Sequential: true},
		{URL: h.URL + "/prefix", Requests: 1, Sequential: true},
		{URL: h.URL + "/a/{key}/b?k={key}#frag", Mode: ModeGet, Requests: 1, Sequential: true},
		{URL: h.URL + "?q=1", Mode: ModeGet, Requests: 1},
	} {
		o.Concurrency = 1
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"POST " + host + " /prefix/v1/entries application/json 1m30s",
		"PUT " + host + " /prefix/v1/entries/key-0  ",
		"GET " + host + " /prefix/v1/entries/key-0  ",
		"GET " + host + " /a/key-0/b?k=key-0  ",
		"GET " + host + " /?q=1  ",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestNetHTTPClient runs through a given net/http client.
func TestNetHTTPClient(t *testing.T) {
	checkLeaks(t)
	s, srv := newAPIServer(t)
	tr1, tr2 := &http.Transport{}, &http.Transport{}
	defer tr1.CloseIdleConnections()
	defer tr2.CloseIdleConnections()
	rep, err := Run(context.Background(), Options{
		URL: srv.URL, Requests: 300, Concurrency: 3, WriteRatio: 0.5, RYW: true, Seed: 4,
		Client: &http.Client{Transport: tr1}, RYWClient: &http.Client{Transport: tr2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 300 || rep.Errors != 0 || rep.RYW.Checks != rep.Writes || rep.RYW.Missing+rep.RYW.Mismatch != 0 {
		t.Fatalf("%+v %+v", rep, rep.RYW)
	}
	if got := s.gets.Load() + s.posts.Load(); got != 300+rep.RYW.Checks {
		t.Errorf("server saw %d requests, want %d", got, 300+rep.RYW.Checks)
	}
}

// Timeout bounds each request with the built-in client, retries included:
// a server that holds a request for most of the timeout and then drops the
// reused connection does not get a second full timeout for the retry.
func TestRawClientTimeoutBoundsRequest(t *testing.T) {
	checkLeaks(t)
	const timeout = time.Second
	url := rawServer(t, func(n int, r *http.Request) (string, bool) {
		if n == 1 {
			return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false
		}
		time.Sleep(900 * time.Millisecond) // then close without an answer
		return "", true
	})
	rep, err := Run(context.Background(), Options{URL: url + "/x", Mode: ModeGet, Requests: 2, Concurrency: 1, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	// About 1s; a fresh timeout for the retry would make it 1.9s. The
	// margin (700ms) leaves room for -race on a slow, busy machine.
	if max := time.Duration(rep.Latency.Max * 1e6); max > timeout+700*time.Millisecond {
		t.Errorf("timeout %v, but a request lasted %v (errors %v)", timeout, max, rep.ErrorKinds)
	}
	if rep.Errors != 1 {
		t.Errorf("errors %d %v, want 1", rep.Errors, rep.ErrorKinds)
	}
}
