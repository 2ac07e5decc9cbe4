package main

import (
	"context"
	"strings"
	"testing"
)

// cachekit serve's only tier is Redis's, and with --redis the deadline of
// a tier call defaults to 1.5 × --redis-timeout (fitTierTimeout): the help
// must say so, not show the service's own default (100ms), which never
// applies and which, given explicitly, is refused as not longer than the
// default --redis-timeout.
func TestServeHelpTierTimeout(t *testing.T) {
	var out syncBuffer
	lookup := func(string) (string, bool) { return "", false }
	if code := serveContext(context.Background(), []string{"-h"}, lookup, &out); code != 0 {
		t.Fatalf("serve -h exited with %d", code)
	}
	help := out.String()
	i := strings.Index(help, "\n  -tier-timeout")
	if i < 0 {
		t.Fatalf("the help lacks --tier-timeout:\n%s", help)
	}
	entry := help[i:]
	if j := strings.Index(entry[1:], "\n  -"); j >= 0 {
		entry = entry[:j+1]
	}
	if strings.Contains(entry, "100ms") || !strings.Contains(entry, "1.5 × --redis-timeout") {
		t.Errorf("--tier-timeout's help does not state the default in effect (1.5 × --redis-timeout):\n%s", entry)
	}
}

// Without --redis, the configuration printed at start showed
// tier-timeout=100ms, the service's own default that the help says never
// applies, shorter than the --redis-timeout printed beside it: the
// default is now derived (1.5 × --redis-timeout) with or without --redis.
func TestServeLogsDerivedTierTimeoutWithoutRedis(t *testing.T) {
	checkLeaks(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json",
		"--redis-timeout", "1s"}, nil)
	code := stop()
	if addr == "" {
		t.Fatalf("serve exited with %d:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), `"tier-timeout":"1.5s"`) {
		t.Errorf("the configuration log does not show tier-timeout 1.5s (1.5 × --redis-timeout 1s, as the help says):\n%s", logs.String())
	}
}
