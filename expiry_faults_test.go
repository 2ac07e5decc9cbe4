package cachekit

import (
	"testing"
	"testing/synctest"
	"time"
)

// A SetWithTTL whose write record waits for its predecessor's (c.waiting)
// is neither in the write queue nor in the wheel: timed() then stops the
// fast clock, and the entry is returned long after its deadline.
func TestFastClockStopsWhileTTLEntryWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		entered := make(chan struct{})
		c := ctNew(t, Options[int, string]{MaxEntries: 10, OnEvict: func(k int, v string, cause Cause) {
			if v == "v0" {
				close(entered)
				<-block
			}
		}})
		ctPin(c)
		c.Set(1, "v0")
		c.settle()
		// Replaces v0 by a new entry and reports v0 before queuing its
		// write record: it blocks there.
		go c.Set(1, "v1")
		<-entered
		// Replaces v1: its record waits for v1's.
		c.SetWithTTL(1, "v2", 5500*time.Millisecond)
		time.Sleep(1500 * time.Millisecond)
		close(block) // v1's record is queued and applied: v2 is scheduled
		synctest.Wait()
		time.Sleep(4100 * time.Millisecond) // 100ms past v2's deadline
		if v, ok := c.Get(1); ok {
			t.Errorf("Get 100ms after the deadline (documented: up to ~1ms late) = %q, true", v)
		}
		if v, ok := c.Peek(1); ok {
			t.Errorf("Peek 100ms after the deadline = %q, true", v)
		}
		c.Close()
	})
}

// bubbleClock is a Clock that reads the (synctest bubble's) system time: an
// injected clock that behaves like the default one.
type bubbleClock struct{}

func (bubbleClock) Now() time.Time { return time.Now() }

// With Options.Clock set, the background goroutine runs one budgeted pass
// (expireBudget = 4096 wheel visits) per second even when the wheel has a
// backlog, so a mass expiry is reclaimed at 4096 entries a second instead
// of "within about a second". With the default clock the same backlog is
// cleared within a few milliseconds.
func TestBacklogReclaimWithClock(t *testing.T) {
	for _, withClock := range []bool{false, true} {
		name := "default clock"
		if withClock {
			name = "Options.Clock"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 10 * expireBudget
				opts := Options[int, int]{}
				if withClock {
					opts.Clock = bubbleClock{}
				}
				c := ctNew(t, opts)
				ctPin(c)
				for k := range n {
					c.SetWithTTL(k, k, time.Second)
				}
				time.Sleep(2500 * time.Millisecond) // 1.5s past every deadline
				synctest.Wait()
				if l := c.Len(); l != 0 {
					t.Errorf("1.5s after the TTL, without other activity: Len %d, want 0 (doc: reclaimed within about a second)", l)
				}
				c.Close()
			})
		})
	}
}

// While one writer's OnEvict (for the value its Set replaced) runs, its
// write record is not queued; every later Set of the same key waits for it
// in c.waiting, which keeps each replaced entry, value included, until the
// callback returns: memory grows with the Sets of the key, unbounded.
func TestWaitingChainGrows(t *testing.T) {
	block := make(chan struct{})
	entered := make(chan struct{})
	c := ctNew(t, Options[int, string]{MaxEntries: 10, OnEvict: func(k int, v string, cause Cause) {
		if v == "v0" {
			close(entered)
			<-block
		}
	}})
	c.Set(1, "v0")
	c.settle()
	done := make(chan struct{})
	go func() { c.Set(1, "v1"); close(done) }()
	<-entered
	const n = 10000
	for i := range n {
		c.Set(1, string(make([]byte, 1024))+string(rune(i)))
	}
	c.settle()
	c.c.mu.Lock()
	w := len(c.c.waiting)
	c.c.mu.Unlock()
	close(block)
	<-done
	if w > 1 {
		t.Errorf("after %d Sets of one key during a slow OnEvict, %d entries (each with its 1 KiB value) are held in c.waiting", n, w)
	}
}
