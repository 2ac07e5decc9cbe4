package main

import (
	"strings"
	"testing"
)

// The header's method line says "1 round" for a run with -rounds 1: it
// said "1 rounds; each cache in a fresh process per round, ...".
func TestMethodOneRound(t *testing.T) {
	if got := method(1); strings.Contains(got, "1 rounds") || !strings.HasPrefix(got, "1 round;") {
		t.Errorf("method(1) = %q", got)
	}
	if got := method(3); !strings.HasPrefix(got, "3 rounds;") {
		t.Errorf("method(3) = %q", got)
	}
}
