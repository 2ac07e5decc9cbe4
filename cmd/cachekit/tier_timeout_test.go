package main

import (
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachekit/cachekit/service"
)

// blackHole accepts connections and never answers: a hanging Redis.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// With cachekit serve's default flags (--tier-timeout 100ms, --redis-timeout
// 100ms) and a Redis that does not answer, the ByteTier's circuit breaker
// must open after BreakerFailures (5) failed calls, so that further calls
// fail at once (ErrUnavailable, counted in L2Skipped) instead of each
// waiting for its timeout.
func TestServeBreakerOpensOnHangingRedis(t *testing.T) {
	addr := blackHole(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	o := service.DefaultOptions()
	o.RegisterFlags(fs)
	rf := registerRedisFlags(fs)
	if err := fs.Parse([]string{"--redis", addr, "--max-bytes", "4MiB", "--max-value-bytes", "64KiB"}); err != nil {
		t.Fatal(err)
	}
	o.Logger = quiet
	tier, err := rf.open(quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer tier.close()
	o.Tier = tier.tier
	if err := rf.fitTierTimeout(&o, false); err != nil {
		t.Fatal(err)
	}
	s, err := service.New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tier.attach(s)
	start := time.Now()
	for range 10 {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("PUT", "/v1/entries/k", strings.NewReader("v")))
		if w.Code != 204 {
			t.Fatalf("PUT: %d %s", w.Code, w.Body)
		}
	}
	took := time.Since(start)
	st := tier.tier.Stats()
	t.Logf("10 PUTs took %v; ByteTier stats: L2WriteErrors %d, L2Skipped %d; service tier stats %+v",
		took, st.L2WriteErrors, st.L2Skipped, *s.Stats().Tier)
	if st.L2Skipped == 0 {
		t.Fatalf("after 10 Tier writes to a hanging Redis the breaker never opened (L2Skipped 0, L2WriteErrors %d): "+
			"every timeout is taken for the caller's, the service's --tier-timeout", st.L2WriteErrors)
	}
}

// An explicit --tier-timeout that is not longer than --redis-timeout is
// refused (the breaker would never open); without --redis it is free.
func TestTierTimeoutAgainstRedisTimeout(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		explicit bool
		want     time.Duration // 0: an error
	}{
		{[]string{"--redis", "127.0.0.1:1"}, false, 150 * time.Millisecond},
		{[]string{"--redis", "127.0.0.1:1", "--redis-timeout", "1s"}, false, 1500 * time.Millisecond},
		{[]string{"--redis", "127.0.0.1:1", "--tier-timeout", "100ms"}, true, 0},
		{[]string{"--redis", "127.0.0.1:1", "--tier-timeout", "101ms"}, true, 101 * time.Millisecond},
		{[]string{"--tier-timeout", "10ms"}, true, 10 * time.Millisecond},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		o := service.DefaultOptions()
		o.RegisterFlags(fs)
		rf := registerRedisFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := rf.fitTierTimeout(&o, tc.explicit)
		switch {
		case tc.want == 0 && err == nil:
			t.Errorf("%v: accepted (tier-timeout %v)", tc.args, o.TierTimeout)
		case tc.want != 0 && (err != nil || o.TierTimeout != tc.want):
			t.Errorf("%v: tier-timeout %v, %v; want %v", tc.args, o.TierTimeout, err, tc.want)
		}
	}
}
