package main

import (
	"io"
	"testing"
)

// TestBadFlags checks that bad flags are errors, before anything is
// measured.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"extra"}, {"-from-json", "/nonexistent.json"}, {"-caches", "nope"}, {"-rounds", "0"}, {"-churn", "-1"}} {
		if err := run(args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}
