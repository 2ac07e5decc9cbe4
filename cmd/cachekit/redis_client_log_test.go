package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRedisClientLogsInLogFormat: go-redis logged through its own default
// logger, straight to stderr ("redis: 2026/11/29 21:09:48 pool.go:762:
// redis: connection pool: failed to dial after 5 attempts: ..."), in
// neither --log-format, whatever --log-level, and without a rate limit:
// a --log-format json log was no longer one JSON object per line. Its
// lines must reach serve's logger ("redis client", at Warn).
func TestRedisClientLogsInLogFormat(t *testing.T) {
	if os.Getenv("CACHEKIT_LOGFMT_CHILD") == "1" {
		os.Exit(serveCmd([]string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json",
			"--redis", os.Getenv("CACHEKIT_LOGFMT_REDIS")}, os.Stdout, os.Stderr))
	}
	checkLeaks(t)
	redisAddr := closedAddr(t) // nothing listens: Redis is down
	cmd := exec.Command(os.Args[0], "-test.run=^TestRedisClientLogsInLogFormat$")
	cmd.Env = append(os.Environ(), "CACHEKIT_LOGFMT_CHILD=1", "CACHEKIT_LOGFMT_REDIS="+redisAddr)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1000)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stderr)
	}()
	exited := make(chan error, 1)
	var all []string
	// Wait for the server to listen.
	var addr string
	for l := range lines {
		all = append(all, l)
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "serving" {
			addr, _ = m["addr"].(string)
			break
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		<-readDone
		cmd.Wait()
		t.Fatalf("the server never listened:\n%s", strings.Join(all, "\n"))
	}
	// Reads and writes while Redis is down: each one's tier call fails.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, m := range []string{"PUT", "GET", "DELETE"} {
		req, _ := http.NewRequest(m, "http://"+addr+"/v1/entries/k-"+m, strings.NewReader("v"))
		resp, err := client.Do(req)
		if err != nil {
			cmd.Process.Kill()
			<-readDone
			cmd.Wait()
			t.Fatalf("%s: %v", m, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// More reads, until go-redis has logged a dial failure, which must
	// come as serve's own JSON line (the guard is in the safe direction:
	// it ends a run that never sees one, which fails below).
	routed := false
	for guard := time.Now().Add(20 * time.Second); !routed && time.Now().Before(guard); {
		resp, err := client.Get("http://" + addr + "/v1/entries/k-again")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	drain:
		for {
			select {
			case l := <-lines:
				all = append(all, l)
				var m map[string]any
				if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "redis client" {
					routed = true
				}
			default:
				break drain
			}
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		all = append(all, l)
	}
	if !routed {
		t.Error(`no line of go-redis's reached serve's logger as "redis client"`)
	}
	<-readDone
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("cachekit serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second): // a guard, in the safe direction
		cmd.Process.Kill()
		<-exited
		t.Fatal("cachekit serve did not exit after SIGTERM")
	}
	var bad []string
	for _, l := range all {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		t.Errorf("with --log-format json, %d of the %d lines serve wrote to stderr are not JSON, e.g.:\n%s",
			len(bad), len(all), strings.Join(bad[:min(len(bad), 3)], "\n"))
	}
}
