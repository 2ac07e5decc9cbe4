package main

import (
	"strings"
	"testing"
)

// cachekit serve --max-ttl below the default TTL (10m), without
// --default-ttl, starts with the default TTL fitted to --max-ttl and logs
// that value: it exited 1 ("default-ttl 10m0s exceeds max-ttl 5m0s"), for
// a default TTL the user never gave. A --default-ttl given over --max-ttl
// is still refused.
func TestServeShortMaxTTL(t *testing.T) {
	checkLeaks(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "1MiB", "--log-format", "json", "--max-ttl", "5m"}, nil)
	code := stop()
	if addr == "" {
		t.Fatalf("serve --max-ttl 5m exited %d:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), `"default-ttl":"5m0s"`) {
		t.Errorf("the configuration log lacks the default TTL in effect, 5m0s:\n%s", logs.String())
	}
	addr, logs, stop = runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "1MiB", "--max-ttl", "5m", "--default-ttl", "10m"}, nil)
	if code := stop(); addr != "" || code == 0 {
		t.Errorf("serve --max-ttl 5m --default-ttl 10m: listening %q, exit %d; want it refused:\n%s", addr, code, logs.String())
	}
}
