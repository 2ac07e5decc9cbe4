package main

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestShutdownTimeoutBoundsRedisCalls: with a Redis that stopped
// answering, serve exited only after --redis-timeout (8s here), not within
// --shutdown-timeout (200ms): Serve cut the request off at 200ms, but the
// deferred tier close (ByteTier.Close) then waited for its Redis call,
// which went on detached from the request. A service manager allowing
// --shutdown-timeout plus a margin would kill it.
func TestShutdownTimeoutBoundsRedisCalls(t *testing.T) {
	checkLeaks(t)
	redisAddr := startRedis(t)
	proxy := partStartProxy(t, redisAddr, "hung-key")
	in := partServe(t, proxy.ln.Addr().String(), "--redis-timeout", "8s", "--shutdown-timeout", "200ms")
	partWaitSubscribers(t, redisAddr, 1)
	// A write while Redis answers leaves a pooled connection, which the
	// read below reuses (a new one would hang in its handshake).
	if r := partDo(t, "PUT", in.url+"/v1/entries/warm", "v"); r.code != 204 {
		t.Fatalf("PUT: %+v", r)
	}
	if m := partMetrics(t, in); m["cachekit_tier_errors_total"] != 0 {
		t.Fatalf("the PUT did not reach Redis: %v", m)
	}
	proxy.partitioned.Store(true) // Redis stops answering
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	got := make(chan error, 1)
	go func() {
		resp, err := client.Get(in.url + "/v1/entries/hung-key")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		got <- err
	}()
	select {
	case <-proxy.sent: // the GET's tier read is on its way to the hung Redis
	case <-time.After(20 * time.Second):
		t.Fatal("the GET never reached Redis")
	}
	start := time.Now()
	code := in.stop() // as SIGTERM
	took := time.Since(start)
	<-got
	t.Logf("exit %d after %v", code, took.Round(time.Millisecond))
	// --shutdown-timeout is 200ms; allow 3s more (a guard in the safe
	// direction: the Redis call in flight ends only after 8s).
	if took > 3200*time.Millisecond {
		t.Errorf("cachekit serve took %v to exit after SIGTERM with --shutdown-timeout 200ms: it waited for the hung Redis call "+
			"of a request it had already cut off (--redis-timeout 8s)", took.Round(time.Millisecond))
	}
}
