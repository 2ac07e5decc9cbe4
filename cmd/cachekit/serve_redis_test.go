package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startRedis starts a redis-server of its own on a free 127.0.0.1 port,
// stopped when the test ends. Without redis-server the test skips, unless
// CACHEKIT_REQUIRE_REDIS=1 (make test), where it fails.
func startRedis(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CACHEKIT_REDIS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			if os.Getenv("CACHEKIT_REQUIRE_REDIS") == "1" {
				t.Fatalf("redis-server not found and CACHEKIT_REQUIRE_REDIS=1: %v", err)
			}
			t.Skip("redis-server not found: install it (make setup) or set CACHEKIT_REDIS_SERVER; CACHEKIT_REQUIRE_REDIS=1 makes this a failure")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a starting process, not an assertion
	}
}

// TestServeRedis runs two instances of cachekit serve sharing one Redis
// (--redis): a write on one is read on the other, and a delete on one
// reaches the other's in-memory copy.
func TestServeRedis(t *testing.T) {
	checkLeaks(t)
	redisAddr := startRedis(t)
	var urls []string
	for i := range 2 {
		addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--max-value-bytes", "64KiB",
			"--redis", redisAddr, "--redis-prefix", "serve-test:", "--redis-timeout", "1s", "--log-level", "warn"}, nil)
		if addr == "" {
			t.Fatalf("instance %d exited with %d:\n%s", i, stop(), logs.String())
		}
		defer func() {
			if code := stop(); code != 0 {
				t.Errorf("instance %d exited with %d", i, code)
			}
		}()
		urls = append(urls, "http://"+addr)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	do := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	a, b := urls[0]+"/v1/entries/k", urls[1]+"/v1/entries/k"
	if code, _ := do("PUT", a, "v1"); code != 204 {
		t.Fatalf("PUT on A: %d", code)
	}
	if code, body := do("GET", b, ""); code != 200 || body != "v1" {
		t.Fatalf("GET on B after PUT on A: %d %q, want 200 v1 (through Redis)", code, body)
	}
	// B now holds k in memory; A's delete must reach it through Redis's
	// Pub/Sub (asynchronous: polled with a deadline).
	if code, _ := do("DELETE", a, ""); code != 204 {
		t.Fatalf("DELETE on A: %d", code)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _ := do("GET", b, "")
		if code == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still serves k 5s after A deleted it (%d)", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
