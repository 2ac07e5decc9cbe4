package stampede

import (
	"sync/atomic"
	"time"
)

// Clock is a clock moved by hand, so that a hot key can be made due for a
// refresh (or expired) without sleeping. It satisfies cachekit.Clock
// (Now), otter v2's Clock (NowNano, Tick) and sturdyc's Clock (Now,
// NewTicker, NewTimer, Since). It never ticks and its timers never fire:
// the adapters configure the caches so that they need neither.
type Clock struct{ ns atomic.Int64 }

// NewClock returns a Clock set to a fixed, arbitrary instant.
func NewClock() *Clock {
	c := &Clock{}
	c.ns.Store(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// NowNano returns the clock's time in nanoseconds since the Unix epoch.
func (c *Clock) NowNano() int64 { return c.ns.Load() }

// Tick returns nil: no ticks (otter then does without periodic clean-ups).
func (c *Clock) Tick(time.Duration) <-chan time.Time { return nil }

// NewTicker returns a ticker that never ticks.
func (c *Clock) NewTicker(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }

// NewTimer returns a timer that never fires.
func (c *Clock) NewTimer(time.Duration) (<-chan time.Time, func() bool) {
	return nil, func() bool { return true }
}

// Since returns the time elapsed since t on this clock.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
