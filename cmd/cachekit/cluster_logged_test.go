package main

import (
	"strings"
	"testing"
)

// Several --redis addresses imply a Redis Cluster (as --redis-cluster's
// help says, and go-redis's universal client does): the configuration log
// must say so, not "redis-cluster":false.
func TestServeSeveralRedisAddressesLoggedAsCluster(t *testing.T) {
	checkLeaks(t)
	a, b := closedAddr(t), closedAddr(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json",
		"--redis", a + ", " + b}, nil)
	code := stop()
	if addr == "" {
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
	if !strings.Contains(logs.String(), `"redis-cluster":"true"`) {
		t.Errorf("the configuration log does not show redis-cluster true for two addresses:\n%s", logs.String())
	}
}
