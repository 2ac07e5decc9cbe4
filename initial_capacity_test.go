package cachekit

import (
	"errors"
	"math"
	"testing"
)

// An InitialCapacity no machine can hold is bad input: New must refuse it
// with an error wrapping ErrInvalidOptions, not panic.
func TestInitialCapacityHuge(t *testing.T) {
	for _, opts := range []Options[int, int]{
		{InitialCapacity: math.MaxInt},
		{InitialCapacity: math.MaxInt, MaxWeight: 10, Weigher: func(int, int) uint32 { return 1 }},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("New(%+v) panicked: %v", opts, r)
				}
			}()
			c, err := New(opts)
			if err == nil {
				c.Close()
				t.Errorf("New(InitialCapacity: MaxInt) succeeded")
			} else if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("err %v", err)
			}
		}()
	}
}
