package cachekit

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Close, called while the background goroutine runs an OnEvict callback,
// returns without waiting; the goroutine must exit when the callback
// returns, not start another maintenance pass. It waited in a select on
// both the stop signal and its ticker: with a tick pending (time went on
// while the callback ran) the select picked either, and half the time
// the goroutine ran one more pass after Close, reporting removals to a
// listener its owner believed stopped. The check is repeated because
// the old select chose at random.
func TestNoPassAfterCloseDuringCallback(t *testing.T) {
	for round := range 40 {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			var closed, late atomic.Bool
			c := Must(Options[int, int]{OnEvict: func(k, v int, cause Cause) {
				if k == 1 {
					<-release // a slow listener, running when Close is called
				} else if closed.Load() {
					late.Store(true)
				}
			}})
			c.SetWithTTL(1, 1, 10*time.Millisecond)
			c.SetWithTTL(2, 2, 3*time.Second)
			time.Sleep(1500 * time.Millisecond) // the 1s pass removes key 1
			synctest.Wait()                     // its callback waits for release
			time.Sleep(5 * time.Second)         // key 2 expires; a tick is pending
			closed.Store(true)
			c.Close()
			close(release)
			time.Sleep(5 * time.Second)
			synctest.Wait()
			if late.Load() {
				t.Fatalf("round %d: OnEvict ran for a pass started after Close", round)
			}
		})
	}
}
