package cachekit

import (
	"testing"
	"time"
)

// fixedClock is a Clock that never moves.
type fixedClock time.Time

func (f fixedClock) Now() time.Time { return time.Time(f) }

// Spreading the read buffer's stripes runs on the machine's time, not on an
// injected Clock: a Clock set in the future made the time since its start
// negative, and no spread ever happened (goroutines that shared a stripe
// kept sharing it).
func TestSpreadWithClockInTheFuture(t *testing.T) {
	future := fixedClock(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	c := ctNew(t, Options[int, int]{MaxEntries: 100, Clock: future})
	m0 := c.c.probeMul.Load()
	c.c.contended()
	if c.c.probeMul.Load() == m0 {
		t.Fatal("contended did not spread the stripes under a Clock set in the future")
	}
}
