package redis

import (
	"errors"
	"testing"
	"time"
)

type nilBaseClock struct{ base *time.Time }

func (c *nilBaseClock) Now() time.Time { return *c.base } // nil base: panics

// NewByteTier accepted a Clock whose Now panics (a nil pointer of a clock
// type); the breaker's first reading panicked then, in a call. It is read
// once at NewByteTier now, as the Cache's New reads its own.
func TestByteTierRefusesPanickingClock(t *testing.T) {
	client := standaloneClient(t)
	bt, err := NewByteTier(ByteTierOptions{Client: client, Prefix: testPrefix(t), Clock: &nilBaseClock{}})
	if bt != nil {
		bt.Close()
	}
	if !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("NewByteTier with a Clock whose Now panics: %v; want an error wrapping ErrInvalidOptions", err)
	}
}

// A ByteTier's tombstone lasts twice Timeout, as Delete's doc says: the
// milliseconds were rounded down, so a Timeout under a millisecond got a
// shorter one.
func TestTombstoneKeepAtLeastTwiceTimeout(t *testing.T) {
	for _, c := range []struct {
		timeout time.Duration
		want    int64
	}{
		{0, 1},
		{100 * time.Microsecond, 1},
		{700 * time.Microsecond, 2},
		{time.Millisecond, 2},
		{1500 * time.Microsecond, 3},
		{time.Second, 2000},
	} {
		if got := tombstoneKeep(c.timeout); got != c.want {
			t.Errorf("tombstoneKeep(%v) = %d ms, want %d", c.timeout, got, c.want)
		}
	}
}
