package main

import (
	"flag"
	"testing"
	"time"

	ckredis "github.com/cachekit/cachekit/redis"
	"github.com/cachekit/cachekit/service"
)

// --redis-timeout 0 means the ByteTier's default (ckredis.DefaultTimeout,
// 100ms): the server's tier timeout must still end up longer than that,
// and an explicit --tier-timeout that is not longer must be refused, as
// for any other --redis-timeout.
func TestZeroRedisTimeoutKeepsTierTimeoutLonger(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		explicit bool
	}{
		{[]string{"--redis", "127.0.0.1:1", "--redis-timeout", "0"}, false},
		{[]string{"--redis", "127.0.0.1:1", "--redis-timeout", "0", "--tier-timeout", "50ms"}, true},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		o := service.DefaultOptions()
		o.RegisterFlags(fs)
		rf := registerRedisFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := rf.fitTierTimeout(&o, tc.explicit); err != nil {
			continue // refused: fine
		}
		o.MaxBytes = 4 << 20
		s, err := service.New(o)
		if err != nil {
			continue
		}
		got := s.Options().TierTimeout
		s.Close()
		if got <= ckredis.DefaultTimeout {
			t.Errorf("%v: accepted with tier-timeout %v, not longer than the ByteTier's effective timeout %v: the breaker never opens",
				tc.args, got, time.Duration(ckredis.DefaultTimeout))
		}
	}
}
