package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cachekit/cachekit/service"
	goredis "github.com/redis/go-redis/v9"
)

// --redis-timeout is documented as "deadline of every Redis call" (serve's
// help, redistier.go:33). Given 1m, a Redis call must be allowed up to a
// minute. go-redis's read deadline is the earlier of the context's
// deadline and the client's ReadTimeout; rf.open once left that at
// ClientDefaults' 1s, so every call was cut after 1s (2s with the one
// retry) whatever --redis-timeout said.
//
// The test pauses Redis for 5s (CLIENT PAUSE, no sleep in the test) and
// reads an absent key through the service: with a 1m --redis-timeout the
// tier read must wait for Redis and end as a miss, not as a tier error.
func TestRedisTimeoutOverOneSecondApplied(t *testing.T) {
	checkLeaks(t)
	redisAddr := startRedis(t)
	addr, logs, stop := runServe(t, []string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--max-value-bytes", "64KiB",
		"--redis", redisAddr, "--redis-timeout", "1m", "--log-level", "error"}, nil)
	if addr == "" {
		t.Fatalf("serve exited with %d:\n%s", stop(), logs.String())
	}
	defer stop()

	admin := goredis.NewClient(&goredis.Options{Addr: redisAddr})
	defer admin.Close()
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "5000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}

	client := &http.Client{Timeout: time.Minute}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://" + addr + "/v1/entries/absent")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = client.Get("http://" + addr + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st service.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Tier == nil {
		t.Fatal("no tier in /v1/stats")
	}
	if st.Tier.Errors != 0 || st.Tier.Misses != 1 {
		t.Errorf("a read that Redis answers after ~5s, with --redis-timeout 1m: tier stats %+v; want 1 miss, 0 errors "+
			"(the client's 1s ReadTimeout from ClientDefaults cut the call short)", *st.Tier)
	}
}

// --redis-timeout's help: "deadline of every Redis call; --tier-timeout
// must be longer (by default 1.5 × this)", and fitTierTimeout's doc: the
// server's deadline must be longer than the ByteTier's, or a hanging Redis
// never opens the circuit breaker. fitTierTimeout computed redisTimeout +
// redisTimeout/2 in integer nanoseconds: for --redis-timeout 1ns that was
// 1ns + 0 = 1ns, not longer, accepted silently (an explicit --tier-timeout
// 1ns is refused).
func TestDerivedTierTimeoutLongerForOneNanosecond(t *testing.T) {
	rf := &redisFlags{addrs: "127.0.0.1:1", timeout: time.Nanosecond}
	o := service.DefaultOptions()
	if err := rf.fitTierTimeout(&o, false); err != nil {
		return // refused: fine
	}
	if o.TierTimeout <= rf.timeout {
		t.Errorf("--redis-timeout %v gave --tier-timeout %v: not longer, the breaker never opens", rf.timeout, o.TierTimeout)
	}
}

// zerosInEffect: "Negative durations stay, for fitTierTimeout to refuse";
// the server's own negative durations are refused too
// (--tier-timeout -1s exits 1 even without --redis: "tier-timeout must be
// positive"). Without --redis no ByteTier is built: serve once started
// and printed the negative value in its configuration log as if it were in
// effect, and a CACHEKIT_REDIS_TIMEOUT=-1s in a deployment was only found
// the day --redis was added. fitTierTimeout now refuses them.
func TestNegativeRedisDurationsRefusedWithoutRedis(t *testing.T) {
	checkLeaks(t)
	for _, args := range [][]string{
		{"--redis-timeout", "-1s"},
		{"--redis-degraded-ttl", "-1s"},
	} {
		addr, logs, stop := runServe(t, append([]string{"--addr", "127.0.0.1:0", "--max-bytes", "4MiB", "--log-format", "json"}, args...), nil)
		code := stop()
		if addr != "" {
			t.Errorf("serve %v: started (exit %d after stop); want it refused:\n%s", args, code, logs.String())
		}
	}
}

// --max-bytes is "budget of the in-memory store's entry storage" with no
// stated maximum; the store takes at most 65536 shards of 1 GiB (64 TiB).
// Beyond that, serve must say that --max-bytes is too large. It once said
// "max-value-bytes 1024 ... must fit in a store shard: raise max-bytes or
// lower them (bytecache: ... Shards 34359738368 is not a power of two
// between 1 and 65536)": the opposite of the fix, about a value limit and
// a shard count the user never gave.
func TestMaxBytesTooLargeNamedAsTheCause(t *testing.T) {
	var logs bytes.Buffer
	code := serveContext(context.Background(), []string{"--addr", "127.0.0.1:0", "--max-bytes", "100TiB"},
		func(string) (string, bool) { return "", false }, &logs)
	if code == 0 {
		t.Fatalf("--max-bytes 100TiB: exit 0")
	}
	if strings.Contains(logs.String(), "raise max-bytes") || !strings.Contains(logs.String(), "max-bytes") {
		t.Errorf("--max-bytes 100TiB (over the store's 64 TiB): the error does not say max-bytes is too large:\n%s", logs.String())
	}
}
