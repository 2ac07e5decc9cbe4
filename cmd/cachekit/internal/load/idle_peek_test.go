//go:build unix

package load

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIdlePeekKeepsOpenConnection: the idle check's peek went through a
// runtime read that fails once the deadline set for the previous request
// has passed, and the failure was taken for a close: a kept-alive
// connection idle for longer than Timeout was redialled before each
// request. The peek clears the deadline first.
func TestIdlePeekKeepsOpenConnection(t *testing.T) {
	checkLeaks(t)
	url := rawServer(t, func(int, *http.Request) (string, bool) {
		return "HTTP/1.1 204 No Content\r\n\r\n", false // keeps the connection open
	})
	addr := strings.TrimPrefix(url, "http://")
	const timeout = 100 * time.Millisecond
	s := &rawSender{addr: addr, host: addr, timeout: timeout, maxKeep: 1 << 10}
	defer s.close()
	if status, _, err := s.send(&request{method: "GET", target: []byte("/first")}, false, nil); err != nil || status != 204 {
		t.Fatalf("first request: %d, %v", status, err)
	}
	after := time.Now()
	first := s.conn
	if first == nil {
		t.Fatal("no connection kept after the first request")
	}
	// The server keeps the connection open; only the first request's
	// deadline (at most after+timeout) passes. A wait in the safe
	// direction: the condition holds for good once reached.
	for !time.Now().After(after.Add(timeout)) {
		time.Sleep(10 * time.Millisecond)
	}
	if peerClosed(first) {
		t.Errorf("peerClosed reports a connection the server holds open as closed (its last request's deadline has passed)")
	}
	s.lastUsed = time.Now().Add(-idleCheck) // idle: the check runs
	if status, _, err := s.send(&request{method: "GET", target: []byte("/second")}, false, nil); err != nil || status != 204 {
		t.Fatalf("second request: %d, %v", status, err)
	}
	if s.conn != first {
		t.Errorf("the second request was sent on a new connection; want the open, idle one reused")
	}
}
