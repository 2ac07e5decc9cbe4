package load

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// A server that refuses a body over its limit answers 413 before reading
// it, and closes the connection: the rest of the body cannot be written
// (broken pipe), but the answer arrived and is what the report counts.
func TestEarlyAnswerToLargeWriteIsCounted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Read the header only, answer, and close with the body
			// unread (the connection is reset).
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				io.WriteString(c, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}
			c.Close()
		}
	}()
	rep, err := Run(context.Background(), Options{
		URL: "http://" + ln.Addr().String(), WriteRatio: 1, WriteMethod: WritePut,
		ValueSize: 24 << 20, Requests: 2, Concurrency: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.ErrorKinds["status 413"]; rep.Errors != 2 || e == nil || e.Count != 2 {
		t.Errorf("%d errors %v; want 2 of kind %q", rep.Errors, kinds(rep), "status 413")
	}
}

func kinds(rep *Report) map[string]string {
	m := map[string]string{}
	for k, e := range rep.ErrorKinds {
		m[k] = e.Example
	}
	return m
}
