package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGTERM (what a service manager or a container runtime sends) shuts
// cachekit serve down gracefully: a request in flight when the signal
// arrives is completed, not cut off, and the process then exits 0 after
// logging "stopped". The child is the helper of TestServeSecondSignalStops
// (its --shutdown-timeout is an hour, so nothing here depends on timing).
func TestServeSIGTERMFinishesInFlight(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeSignalHelper$")
	cmd.Env = append(os.Environ(), "CACHEKIT_SERVE_HELPER=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
		}
		<-exited
	}()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stderr)
	}()
	wait := func(what string) string {
		for l := range lines {
			if strings.Contains(l, what) {
				return l
			}
		}
		t.Fatalf("the server's log ended before %q", what)
		return ""
	}
	l := wait("msg=serving")
	addr := l[strings.Index(l, "addr=")+len("addr="):]
	go func() { waitErr = cmd.Wait(); close(exited) }()

	// A request in flight: its headers are read and the handler waits for
	// the body it asked for (100 Continue).
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	io.WriteString(conn, "PUT /v1/entries/k HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "100") {
		t.Fatalf("no 100 Continue: %q %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line after it
		t.Fatal(err)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	wait("shutting down")
	select {
	case <-exited:
		t.Fatalf("cachekit serve exited (%v) with a request in flight", waitErr)
	default:
	}
	if _, err := io.WriteString(conn, "hello"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("the request in flight got %d, want 204", resp.StatusCode)
	}
	wait("msg=stopped")
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("cachekit serve did not exit after its graceful shutdown")
	}
	killed = true
	if waitErr != nil {
		t.Fatalf("cachekit serve exited with %v after SIGTERM, want status 0", waitErr)
	}
}
