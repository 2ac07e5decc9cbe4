package service

import (
	"errors"
	"strings"
	"testing"
)

// New accepted a nil pointer in the Tier interface (a *mapTier, or a
// *redis.ByteTier, never set): every tier call then panicked in a handler,
// recovered as a 500 with a stack in the log. New refuses it.
func TestNewRefusesNilPointerTier(t *testing.T) {
	s, err := New(Options{MaxBytes: 1 << 20, MaxValueBytes: 1024, Tier: (*mapTier)(nil), Logger: quietLogger()})
	if s != nil {
		s.Close()
	}
	if !errors.Is(err, ErrInvalidOptions) || !strings.Contains(err.Error(), "tier") {
		t.Fatalf("New with a nil *mapTier: server returned %v, error %v; want an error wrapping ErrInvalidOptions naming the tier", s != nil, err)
	}
}
