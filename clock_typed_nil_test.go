package cachekit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cachekit/cachekit"
)

// nilableClock is a fake clock with a pointer receiver, as test clocks
// usually are: a nil *nilableClock in Options.Clock is a typed nil.
type nilableClock struct{ t time.Time }

func (c *nilableClock) Now() time.Time { return c.t }

// New panicked when Options.Clock was a typed nil (var clk *FakeClock;
// Options{Clock: clk}): it read the clock unguarded. It returns an error
// wrapping ErrInvalidOptions that names the Clock.
func TestNewRefusesTypedNilClock(t *testing.T) {
	var c *cachekit.Cache[int, int]
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("New with a typed-nil Clock panicked: %v", p)
			}
		}()
		c, err = cachekit.New(cachekit.Options[int, int]{Clock: (*nilableClock)(nil)})
	}()
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, cachekit.ErrInvalidOptions) || c != nil {
		t.Fatalf("New with a typed-nil Clock: a cache returned: %v, error %v; want only an error wrapping ErrInvalidOptions", c != nil, err)
	}
	if c, err := cachekit.New(cachekit.Options[int, int]{Clock: &nilableClock{t: time.Now()}}); err != nil {
		t.Fatalf("New with a working clock: %v", err)
	} else {
		c.Close()
	}
}
