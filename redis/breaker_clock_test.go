package redis

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// panickyClock is a fakeClock whose Now panics while armed.
type panickyClock struct {
	fakeClock
	armed atomic.Bool
}

func (c *panickyClock) Now() time.Time {
	if c.armed.Load() {
		panic("clock failed")
	}
	return c.fakeClock.Now()
}

func recoverPanic(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// An injected Clock whose Now panics while the breaker reads it under its
// lock (opening, or deciding whether to probe), the panic recovered by the
// caller (as net/http recovers a handler's): the lock must not stay held,
// or every later call that finds the breaker open, and every reported
// failure, would wait for it for ever (and Close for the Sets stuck so).
func TestBreakerClockPanicReleasesLock(t *testing.T) {
	clock := &panickyClock{fakeClock: fakeClock{t: time.Unix(1e9, 0)}}
	b := newBreaker(1, time.Second, clock, nil)
	tk, ok := b.allow()
	if !ok {
		t.Fatal("a new breaker refused a call")
	}
	clock.armed.Store(true)
	if p := recoverPanic(func() { b.failure(tk) }); p == nil { // opens: reads the clock
		t.Fatal("the clock did not panic in failure")
	}
	if !b.mu.TryLock() {
		t.Fatal("the breaker's lock is held after the Clock panicked in failure")
	}
	b.mu.Unlock()
	clock.armed.Store(false)
	if tk, ok = b.allow(); ok {
		b.failure(tk) // opens, the clock working again
	}
	if b.State() != BreakerOpen {
		t.Fatalf("breaker %v, want open", b.State())
	}
	clock.armed.Store(true)
	if p := recoverPanic(func() { b.allow() }); p == nil { // open: reads the clock
		t.Fatal("the clock did not panic in allow")
	}
	if !b.mu.TryLock() {
		t.Fatal("the breaker's lock is held after the Clock panicked in allow")
	}
	b.mu.Unlock()
	clock.armed.Store(false)
	clock.add(2 * time.Second)
	if _, ok := b.allow(); !ok {
		t.Fatal("no probe once the clock works again and openFor has passed")
	}
}

// Stats reads the Clock of each node breaker that is not closed (is it
// forgotten?), and breaker.forgotten read it under the breaker's lock with
// a deferred Unlock, while nowLocked already releases the lock when the
// Clock panics: the deferred Unlock then hit an unlocked mutex, "fatal
// error: sync: unlock of unlocked mutex", which kills the process (no
// recover stops it). The Clock is now read before the lock. (Run in a
// child process, so that a regression fails the test, not the run.)
func TestStatsSurvivesClockPanicWithNodeBreakerOpen(t *testing.T) {
	if os.Getenv("CACHEKIT_TEST_CHILD") == t.Name() {
		clock := &panickyClock{fakeClock: fakeClock{t: time.Unix(1e9, 0)}}
		c := &core{brk: newBreaker(1, time.Second, clock, nil), breakers: map[string]*breaker{}}
		c.newBreakerAt = func(string) *breaker { return newBreaker(1, time.Second, clock, nil) }
		b := c.breakerAt("10.0.0.1:6379")
		tk, _ := b.allow()
		b.failure(tk)
		if st, _ := c.breakerState(); st != BreakerOpen {
			t.Fatalf("setup: state %v, want open", st)
		}
		clock.armed.Store(true)
		p := recoverPanic(func() { c.breakerState() })
		clock.armed.Store(false)
		if p == nil {
			t.Fatal("the Clock's panic was not raised")
		}
		if !b.mu.TryLock() {
			t.Fatal("the breaker's lock is held after the Clock panicked")
		}
		b.mu.Unlock()
		fmt.Println("survived")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "CACHEKIT_TEST_CHILD="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "survived") {
		t.Fatalf("breakerState with an open node breaker and a Clock that panics (%v):\n%s", err, out)
	}
}
