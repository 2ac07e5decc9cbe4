package redis

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit"
)

// BreakerState is the state of the circuit breaker in front of Redis.
type BreakerState uint8

const (
	BreakerClosed   BreakerState = iota // calls go to Redis
	BreakerOpen                         // calls fail at once, without Redis
	BreakerHalfOpen                     // one probe call is in flight; others fail at once
)

func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return "unknown"
}

// breaker is a consecutive-failure circuit breaker. It opens after
// threshold failures in a row; after openFor it lets one call through (the
// probe, half-open): its success closes the breaker, its failure opens it
// again for openFor. The closed state's checks are single atomic loads, so
// a healthy Redis pays no lock.
//
// Every call that allow admits carries a ticket: the state it was admitted
// in and the number of that state (each change of state starts a new
// one). A result changes the breaker only if the state it was admitted in
// is still the current one: a call admitted while closed that fails after
// the breaker has opened (or half-opened, or closed again) counts for
// nothing; and since no call but the probe is admitted while half-open,
// only the probe's result ends that state. (Without tickets, a late
// failure of an old call would reopen a half-open breaker and hide the
// probe's success, and a late neutral would let a second probe through
// while the first is in flight.)
type breaker struct {
	threshold int64
	openFor   time.Duration
	clock     cachekit.Clock // nil: time.Now
	onChange  func(from, to BreakerState)

	// state is the current state's ticket: its number << 2 | its
	// BreakerState, in one word so that allow reads both at once.
	state    atomic.Uint64
	failures atomic.Int64  // consecutive failures while closed; written under mu
	opens    atomic.Uint64 // times the breaker opened

	mu       sync.Mutex // guards transitions, openedAt and asked
	openedAt time.Time
	asked    time.Time // while not closed: the last call's allow, or the opening
}

// ticket identifies the state a call was admitted in (see breaker).
type ticket uint64

func (t ticket) state() BreakerState { return BreakerState(t & 3) }

func newBreaker(threshold int, openFor time.Duration, clock cachekit.Clock, onChange func(from, to BreakerState)) *breaker {
	return &breaker{threshold: int64(threshold), openFor: openFor, clock: clock, onChange: onChange}
}

func (b *breaker) now() time.Time {
	if b.clock != nil {
		return b.clock.Now()
	}
	return time.Now()
}

func (b *breaker) State() BreakerState { return b.current().state() }

func (b *breaker) current() ticket { return ticket(b.state.Load()) }

// allow reports whether a call may go to Redis, with the call's ticket. A
// true answer must be followed by exactly one of success, failure or
// neutral with that ticket, whatever happens to the call (a panic
// included: see core.call), or a half-open breaker would wait for its
// probe for ever.
func (b *breaker) allow() (ticket, bool) {
	if t := b.current(); t.state() == BreakerClosed {
		return t, true
	}
	b.mu.Lock()
	t := b.current()
	switch t.state() {
	case BreakerClosed:
		b.mu.Unlock()
		return t, true
	case BreakerOpen:
		// A clock that stepped back since the breaker opened (an
		// injected Clock) lets the probe through at once, rather than
		// keeping the breaker open for the size of the step.
		b.asked = b.nowLocked()
		if el := b.asked.Sub(b.openedAt); el >= b.openFor || el < 0 {
			b.set(BreakerHalfOpen)
			t = b.current()
			b.unlock(BreakerOpen, BreakerHalfOpen)
			return t, true // this call is the probe
		}
	case BreakerHalfOpen:
		b.asked = b.nowLocked()
	}
	b.mu.Unlock()
	return 0, false
}

// success reports a call that Redis answered.
func (b *breaker) success(t ticket) {
	if t.state() == BreakerClosed && b.failures.Load() == 0 {
		return // the common case: nothing to change
	}
	b.mu.Lock()
	from := b.current().state()
	if b.current() == t {
		switch t.state() {
		case BreakerClosed:
			b.failures.Store(0)
		case BreakerHalfOpen: // the probe
			b.failures.Store(0)
			b.set(BreakerClosed)
		}
	}
	b.unlock(from, b.current().state())
}

// failure reports a call that failed for Redis's sake (timeout, network).
func (b *breaker) failure(t ticket) {
	b.mu.Lock()
	from := b.current().state()
	if b.current() == t {
		switch t.state() {
		case BreakerClosed:
			if b.failures.Add(1) >= b.threshold {
				b.open()
			}
		case BreakerHalfOpen: // the probe
			b.open()
		}
	}
	b.unlock(from, b.current().state())
}

// neutral reports a call that tells nothing about Redis (its caller gave
// up first, or it panicked). A probe that ends so lets the next call probe
// again.
func (b *breaker) neutral(t ticket) {
	if t.state() != BreakerHalfOpen {
		return
	}
	b.mu.Lock()
	if b.current() == t { // the probe
		b.set(BreakerOpen) // openedAt unchanged: the next call probes
		b.unlock(BreakerHalfOpen, BreakerOpen)
		return
	}
	b.mu.Unlock()
}

// forgotten reports whether the breaker is not closed and no call has
// asked it for longer than idle (by its clock): its state then says
// nothing of a node that no call goes to any more. (The breakers of a
// cluster's or ring's past nodes are kept: one per address ever seen.)
func (b *breaker) forgotten(idle time.Duration) bool {
	if b.State() == BreakerClosed {
		return false
	}
	now := b.now() // before the lock: the Clock may panic
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.current().state() == BreakerClosed {
		return false
	}
	// (A call that asked since now was read makes asked later than now:
	// not forgotten.)
	return now.Sub(b.asked) > idle
}

// nowLocked is now for a caller that holds b.mu: if the Clock panics, it
// releases b.mu (and the panic goes on), or every later call that found the
// breaker open, and every failure reported, would wait for it for ever.
func (b *breaker) nowLocked() time.Time {
	done := false
	defer func() {
		if !done {
			b.mu.Unlock()
		}
	}()
	now := b.now()
	done = true
	return now
}

// open opens the breaker. The caller holds b.mu.
func (b *breaker) open() {
	b.openedAt = b.nowLocked()
	b.asked = b.openedAt
	b.failures.Store(0)
	b.opens.Add(1)
	b.set(BreakerOpen)
}

// set changes the state, starting a new one (whose tickets differ from all
// earlier ones). The caller holds b.mu.
func (b *breaker) set(s BreakerState) {
	next := (b.state.Load()>>2 + 1) << 2
	b.state.Store(next | uint64(s))
}

// unlock releases b.mu, which the caller holds, and then reports a change
// of state from from to to (if they differ) to onChange: outside the lock,
// so that a slow logger holds no call back.
func (b *breaker) unlock(from, to BreakerState) {
	b.mu.Unlock()
	if b.onChange != nil && from != to {
		b.onChange(from, to)
	}
}
