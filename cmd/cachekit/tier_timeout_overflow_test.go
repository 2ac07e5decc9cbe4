package main

import (
	"testing"
	"time"

	"github.com/cachekit/cachekit/service"
)

// A huge --redis-timeout (2,000,000h fits a time.Duration) must not make
// the derived --tier-timeout (1.5 × it) overflow into a negative duration:
// serve started with tier-timeout=-2124095h34m33.709551616s in its
// configuration log (and then did not stop on SIGTERM). Either refuse it or
// keep the tier timeout longer than the Redis one.
func TestTierTimeoutNoOverflow(t *testing.T) {
	rf := &redisFlags{addrs: "127.0.0.1:1", timeout: 2000000 * time.Hour}
	o := service.DefaultOptions()
	if err := rf.fitTierTimeout(&o, false); err != nil {
		return // refused: fine
	}
	if o.TierTimeout <= rf.timeout {
		t.Errorf("--redis-timeout %v gave --tier-timeout %v: not longer", rf.timeout, o.TierTimeout)
	}
}
