package main

import (
	"flag"
	"testing"
	"time"

	"github.com/cachekit/cachekit/service"
)

// An explicit --tier-timeout 0 (or CACHEKIT_TIER_TIMEOUT=0) selects the
// default, as every zero of the server's options does: with --redis that is
// 1.5 × --redis-timeout, as when it is not given, not a refusal.
func TestZeroTierTimeoutWithRedisIsTheDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--redis", "127.0.0.1:1", "--tier-timeout", "0"}, 150 * time.Millisecond},
		{[]string{"--redis", "127.0.0.1:1", "--redis-timeout", "50ms", "--tier-timeout", "0"}, 75 * time.Millisecond},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		o := service.DefaultOptions()
		o.RegisterFlags(fs)
		rf := registerRedisFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := rf.fitTierTimeout(&o, true); err != nil || o.TierTimeout != tc.want {
			t.Errorf("%v: tier-timeout %v, %v; want %v", tc.args, o.TierTimeout, err, tc.want)
		}
	}
}
