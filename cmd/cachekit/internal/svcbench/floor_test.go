package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The floor server answers a GET with 200 and a body of the entries' size,
// anything else with 204, and skips request bodies, so that requests sent
// back to back on one connection are each answered.
func TestFloorServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- floorServe(ln, 37) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"id": "key-1", "entry": "` + strings.Repeat("v", 300) + `"}`
	reqs := "POST /v1/entries HTTP/1.1\r\nHost: x\r\ncontent-length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body +
		"GET /v1/entries/key-1 HTTP/1.1\r\nHost: x\r\n\r\n" +
		"DELETE /v1/entries/key-1 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
	if _, err := io.WriteString(conn, reqs); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for i, want := range []struct {
		status int
		length int
	}{{204, 0}, {200, 37}, {204, 0}} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != want.status || len(b) != want.length {
			t.Fatalf("response %d: status %d, %d body bytes (%v); want %d, %d", i, resp.StatusCode, len(b), err, want.status, want.length)
		}
	}
	// A malformed length ends the connection.
	io.WriteString(conn, "POST / HTTP/1.1\r\nContent-Length: x1\r\n\r\n")
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after a bad Content-Length: %v, want EOF", err)
	}
	ln.Close()
	if err := <-done; err == nil {
		t.Error("floorServe returned nil after its listener closed")
	}
}

// The hiccup meter accounts for no more time than it ran, and counts each
// gap under every threshold it exceeds.
func TestMeasureHiccups(t *testing.T) {
	h := measureHiccups(50 * time.Millisecond)
	if h.Seconds != 0.05 || len(h.Over) != len(hiccupThresholds) {
		t.Fatalf("%+v", h)
	}
	if h.LostMs > 1000 || h.MaxMs > h.LostMs {
		t.Errorf("lost %.3f ms, max gap %.3f ms in a 50 ms run", h.LostMs, h.MaxMs)
	}
	for i := 1; i < len(h.Over); i++ {
		if h.Over[i] > h.Over[i-1] {
			t.Errorf("more gaps over %v (%d) than over %v (%d)", hiccupThresholds[i], h.Over[i], hiccupThresholds[i-1], h.Over[i-1])
		}
	}
}
