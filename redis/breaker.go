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
type breaker struct {
	threshold int32
	openFor   time.Duration
	clock     cachekit.Clock // nil: time.Now
	onChange  func(from, to BreakerState)

	state    atomic.Uint32 // BreakerState
	failures atomic.Int32  // consecutive failures while closed
	opens    atomic.Uint64 // times the breaker opened

	mu       sync.Mutex // guards transitions and openedAt
	openedAt time.Time
}

func newBreaker(threshold int, openFor time.Duration, clock cachekit.Clock, onChange func(from, to BreakerState)) *breaker {
	return &breaker{threshold: int32(threshold), openFor: openFor, clock: clock, onChange: onChange}
}

func (b *breaker) now() time.Time {
	if b.clock != nil {
		return b.clock.Now()
	}
	return time.Now()
}

func (b *breaker) State() BreakerState { return BreakerState(b.state.Load()) }

// allow reports whether a call may go to Redis. A true answer must be
// followed by exactly one of success, failure or neutral.
func (b *breaker) allow() bool {
	if b.State() == BreakerClosed {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.State() {
	case BreakerClosed:
		return true
	case BreakerOpen:
		if b.now().Sub(b.openedAt) >= b.openFor {
			b.set(BreakerHalfOpen)
			return true // this call is the probe
		}
	}
	return false
}

// success reports a call that Redis answered.
func (b *breaker) success() {
	if b.State() == BreakerClosed {
		if b.failures.Load() != 0 {
			b.failures.Store(0)
		}
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.State() == BreakerHalfOpen {
		b.failures.Store(0)
		b.set(BreakerClosed)
	}
}

// failure reports a call that failed for Redis's sake (timeout, network).
func (b *breaker) failure() {
	if b.State() == BreakerClosed && b.failures.Add(1) < b.threshold {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.State() {
	case BreakerClosed:
		if b.failures.Load() >= b.threshold {
			b.open()
		}
	case BreakerHalfOpen:
		b.open()
	}
}

// neutral reports a call that tells nothing about Redis (its caller gave
// up first). A probe that ends so lets the next call probe again.
func (b *breaker) neutral() {
	if b.State() != BreakerHalfOpen {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.State() == BreakerHalfOpen {
		b.set(BreakerOpen) // openedAt unchanged: the next call probes
	}
}

// open opens the breaker. The caller holds b.mu.
func (b *breaker) open() {
	b.openedAt = b.now()
	b.failures.Store(0)
	b.opens.Add(1)
	b.set(BreakerOpen)
}

// set changes the state. The caller holds b.mu.
func (b *breaker) set(s BreakerState) {
	from := b.State()
	b.state.Store(uint32(s))
	if b.onChange != nil && from != s {
		b.onChange(from, s)
	}
}
