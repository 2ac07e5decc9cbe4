package service

import (
	"net"
	"strings"
	"testing"
)

// Serve and ListenAndServe refuse a nil Context with an error, before
// serving anything: Serve used to start its HTTP server first and then
// panic on the nil Context, leaving the server goroutine serving ln.
func TestServeNilContext(t *testing.T) {
	checkLeaks(t)
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Addr: "127.0.0.1:0", Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1012 the nil Context is what is tested
	if err := s.Serve(nil, ln); err == nil || !strings.Contains(err.Error(), "nil Context") {
		t.Fatalf("Serve(nil, ln) = %v; want an error naming the nil Context", err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("Serve(nil, ln) left ln open")
	}
	//lint:ignore SA1012 the nil Context is what is tested
	if err := s.ListenAndServe(nil); err == nil || !strings.Contains(err.Error(), "nil Context") {
		t.Fatalf("ListenAndServe(nil) = %v; want an error naming the nil Context", err)
	}
}
