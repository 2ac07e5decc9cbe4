package cachekit

import (
	"sync/atomic"
	"testing"
	"time"
)

// panicClock is a fakeClock whose Now panics once, on the n-th call after
// arm(n).
type panicClock struct {
	*fakeClock
	countdown atomic.Int64
}

func (p *panicClock) arm(n int64) { p.countdown.Store(n) }

func (p *panicClock) Now() time.Time {
	if p.countdown.Load() > 0 && p.countdown.Add(-1) == 0 {
		panic("clock failed")
	}
	return p.fakeClock.Now()
}

func ctRecover(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// A Clock whose Now panics during a maintenance pass, the panic recovered
// by the caller (as net/http recovers a handler's): the maintenance lock
// must not stay locked, or every later Stats, Clear and background pass
// (and so Close) waits for it forever.
func TestClockPanicInMaintenanceReleasesLock(t *testing.T) {
	clock := &panicClock{fakeClock: newFakeClock()}
	c := Must(Options[int, int]{Clock: clock})
	c.Close() // maintenance runs on this goroutine only
	c.SetWithTTL(1, 1, time.Minute)
	clock.arm(1)
	if p := ctRecover(func() { c.Stats() }); p == nil {
		t.Fatal("setup: the clock did not panic in Stats")
	}
	for name, op := range map[string]func(){"Stats": func() { c.Stats() }, "Clear": c.Clear} {
		done := make(chan struct{})
		go func() { op(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second): // guards against the deadlock
			t.Fatalf("%s after a Clock panic in maintenance has not returned: the maintenance lock stayed locked", name)
		}
	}
}

// The same panic after the policy has chosen a victim: the victim must
// not stay in the index unknown to the policy (never evicted again, the
// cache over its bound for good).
func TestClockPanicInEvictionKeepsBound(t *testing.T) {
	clock := &panicClock{fakeClock: newFakeClock()}
	c := Must(Options[int, int]{MaxEntries: 2, Policy: "lru", Clock: clock})
	c.Close()
	c.Set(1, 1)
	c.Set(2, 2)
	c.settle()
	clock.arm(2) // the pass's first read passes, its second (in evict) panics
	p := ctRecover(func() { c.Set(3, 3) })
	if p == nil {
		t.Fatal("setup: the clock did not panic in Set's maintenance")
	}
	errc := make(chan error, 1)
	go func() { errc <- c.checkInvariants() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("after a Clock panic in eviction: %v (Len %d, bound 2)", err, c.Len())
		}
	case <-time.After(60 * time.Second): // guards against the deadlock
		t.Fatal("maintenance after a Clock panic in eviction has not returned: the maintenance lock stayed locked")
	}
}
