package cachekit

import (
	"testing"
	"testing/synctest"
	"time"
)

// A Clock that steps back (an NTP correction, a fake clock reset) does not
// stop the reclaiming of entries that expire meanwhile: they leave the
// index and OnEvict hears of them, without waiting for the clock to catch
// up with the latest time the timer wheel saw.
func TestClockBackwardsReclaims(t *testing.T) {
	clock := newFakeClock()
	var reported []int
	c := Must(Options[int, int]{Clock: clock, OnEvict: func(k, v int, cause Cause) { reported = append(reported, k) }})
	c.Close()
	c.SetWithTTL(1, 1, time.Minute)
	clock.Advance(time.Hour)
	c.settle() // key 1 expired and reclaimed; the wheel's time is now start+1h
	if len(reported) != 1 || c.Len() != 0 {
		t.Fatalf("setup: reported %v, Len %d", reported, c.Len())
	}
	clock.Advance(-50 * time.Minute) // the clock steps back
	c.SetWithTTL(2, 2, time.Second)
	clock.Advance(time.Minute) // key 2 expired 59 s ago
	if _, ok := c.Get(2); ok {
		t.Fatal("Get(2) found an expired entry")
	}
	c.settle()
	c.Stats()
	if c.Len() != 0 || len(reported) != 2 {
		t.Errorf("key 2 expired a minute ago and maintenance ran: Len %d (want 0), OnEvict heard of keys %v (want [1 2])", c.Len(), reported)
	}
}

// A Set with a TTL whose OnEvict report panics (recovered by the caller)
// still starts the cache's fast clock: otherwise the cached time would move
// only once a second, and Get would return the entry long after its TTL.
func TestOnEvictPanicStartsFastClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		panicNext := false
		c := Must(Options[int, int]{OnEvict: func(k, v int, cause Cause) {
			if panicNext {
				panicNext = false
				panic("callback failed")
			}
		}})
		defer c.Close()
		c.Set(1, 1) // no TTL: the fast clock is off
		synctest.Wait()
		func() {
			defer func() { recover() }()
			panicNext = true
			c.SetWithTTL(1, 2, 10*time.Millisecond) // replaces 1: the report panics
		}()
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if v, ok := c.Get(1); ok {
			t.Fatalf("Get(1) = %d, true, 500ms after a TTL of 10ms", v)
		}
	})
}

// Stats promises that Entries and Weight reflect every write that returned
// before it was called, even when an earlier Set of the same key is still
// reporting the value it replaced (its OnEvict runs): that Set queued its
// record before the report, so the later one's is not held behind it.
func TestStatsWeightWhileEarlierSetReports(t *testing.T) {
	inCB, release := make(chan struct{}), make(chan struct{})
	c := Must(Options[int, string]{
		MaxWeight: 100,
		Weigher:   func(k int, v string) uint32 { return uint32(len(v)) },
		OnEvict: func(k int, v string, cause Cause) {
			if v == "a" {
				close(inCB)
				<-release
			}
		},
	})
	defer c.Close()
	c.Set(1, "a") // weight 1
	c.settle()
	done := make(chan struct{})
	go func() {
		c.Set(1, "bb") // replaces "a": its report blocks until released
		close(done)
	}()
	<-inCB
	c.Set(1, "cccccccccc") // weight 10; returns
	s := c.Stats()
	close(release)
	<-done
	if s.Weight != 10 {
		t.Errorf("after Set(1, %q) returned, Stats().Weight = %d (Entries %d), want 10", "cccccccccc", s.Weight, s.Entries)
	}
}
