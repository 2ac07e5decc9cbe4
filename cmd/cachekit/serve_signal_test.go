package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSignalHelper is not a test: run as a child process by
// TestServeSecondSignalStops, it is `cachekit serve`; otherwise it does
// nothing.
func TestServeSignalHelper(t *testing.T) {
	if os.Getenv("CACHEKIT_SERVE_HELPER") != "1" {
		return
	}
	os.Exit(serveCmd([]string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--shutdown-timeout", "1h", "--log-format", "text"},
		os.Stdout, os.Stderr))
}

// After SIGINT, cachekit serve shuts down gracefully, waiting for the
// requests in flight for up to --shutdown-timeout. A second SIGINT (the
// operator's second Ctrl-C) stops it at once, as it stops cachekit load,
// instead of being swallowed while the server waits for the hour.
func TestServeSecondSignalStops(t *testing.T) {
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
	defer func() {
		cmd.Process.Kill()
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
	go func() { cmd.Wait(); close(exited) }()

	// A request in flight: the server asks for its body (100 Continue),
	// which never comes.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "PUT /v1/entries/k HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n")
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(line, "100") {
		t.Fatalf("no 100 Continue: %q %v", line, err)
	}

	cmd.Process.Signal(syscall.SIGINT)
	wait("shutting down")
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("a second SIGINT during the graceful shutdown did not stop cachekit serve (it waits for --shutdown-timeout)")
	}
}
