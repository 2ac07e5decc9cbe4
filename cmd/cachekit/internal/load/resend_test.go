//go:build unix

package load

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// closingServer answers each request with 204 without saying it closes the
// connection, and then closes it, as a server closing idle keep-alive
// connections does; it counts the requests it read.
func closingServer(t *testing.T) (addr string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	url := rawServer(t, func(int, *http.Request) (string, bool) {
		requests.Add(1)
		return "HTTP/1.1 204 No Content\r\n\r\n", true
	})
	return strings.TrimPrefix(url, "http://"), requests
}

// sendClosed sends first on a new connection, waits until the server has
// closed it, then sends req with the connection last used at lastUsed.
func sendClosed(t *testing.T, s *rawSender, req *request, lastUsed time.Time) (int, error) {
	t.Helper()
	if status, _, err := s.send(&request{method: "GET", target: []byte("/first")}, false, nil); err != nil || status != 204 {
		t.Fatalf("first request: %d, %v", status, err)
	}
	for guard := time.Now().Add(10 * time.Second); !peerClosed(s.conn); {
		if time.Now().After(guard) { // a guard in the safe direction
			t.Fatal("the server's close never reached the client")
		}
		time.Sleep(time.Millisecond)
	}
	s.lastUsed = lastUsed
	status, _, err := s.send(req, false, nil)
	return status, err
}

// A write that went whole on a kept-alive connection the server had
// closed, and got no answer, was sent again on a new connection: a server
// that applied it and lost its answer (a write timeout, a shutdown)
// applied it twice, and the report counted one. Only a GET or HEAD is
// sent again; a write fails.
func TestRawClientResendsOnlyIdempotent(t *testing.T) {
	put := &request{method: "PUT", target: []byte("/v1/entries/k"), body: []byte("v")}
	get := &request{method: "GET", target: []byte("/v1/entries/k")}
	for _, tc := range []struct {
		req  *request
		sent int64 // requests the server reads in all
	}{{put, 1}, {get, 2}} {
		addr, requests := closingServer(t)
		s := &rawSender{addr: addr, host: addr, timeout: 10 * time.Second, maxKeep: 1 << 10}
		status, err := sendClosed(t, s, tc.req, time.Now()) // used just now: no check before it
		s.close()
		switch {
		case tc.req == put && err == nil:
			t.Errorf("PUT on a connection the server had closed: %d, no error; want an error, and no second PUT", status)
		case tc.req == get && (err != nil || status != 204):
			t.Errorf("GET on a connection the server had closed: %d, %v; want it sent again on a new connection, 204", status, err)
		}
		if got := requests.Load(); got != tc.sent {
			t.Errorf("%s: the server read %d requests, want %d", tc.req.method, got, tc.sent)
		}
	}
}

// A connection left idle, that the server has closed meanwhile, is
// replaced before a request is written on it: a write then goes through.
func TestRawClientChecksIdleConnection(t *testing.T) {
	addr, requests := closingServer(t)
	s := &rawSender{addr: addr, host: addr, timeout: 10 * time.Second, maxKeep: 1 << 10}
	defer s.close()
	put := &request{method: "PUT", target: []byte("/v1/entries/k"), body: []byte("v")}
	if status, err := sendClosed(t, s, put, time.Now().Add(-idleCheck)); err != nil || status != 204 {
		t.Errorf("PUT after the idle connection was closed: %d, %v; want 204 on a new connection", status, err)
	}
	if got := requests.Load(); got != 2 {
		t.Errorf("the server read %d requests, want 2", got)
	}
}
