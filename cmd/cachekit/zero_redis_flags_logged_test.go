package main

import (
	"strings"
	"testing"
)

// An explicit zero (or empty prefix) given to a --redis-* flag selects the
// ByteTier's default (redis.ByteTierOptions: Timeout 100ms, DegradedTTL 5s,
// Prefix "cachekit-bytes:"): the configuration printed at start must show
// the value in effect, as it does for the server's own flags given as 0
// (TestServeZeroFlagsLoggedAsInEffect), not "0s" (no deadline? never
// cleared?) or an empty prefix (the keys are not where the log says).
func TestServeZeroRedisFlagsLoggedAsInEffect(t *testing.T) {
	checkLeaks(t)
	closed := closedAddr(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json",
		"--redis", closed, "--redis-timeout", "0", "--redis-degraded-ttl", "0", "--redis-prefix", ""}, nil)
	code := stop()
	if addr == "" && code == 2 {
		return // refused as a usage error: fine
	}
	if addr == "" {
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
	for _, want := range []string{`"redis-timeout":"100ms"`, `"redis-degraded-ttl":"5s"`, `"redis-prefix":"cachekit-bytes:"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the configuration log lacks %s (the value in effect):\n%s", want, logs.String())
		}
	}
}
