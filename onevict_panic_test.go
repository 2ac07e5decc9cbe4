package cachekit

import (
	"testing"
)

// An OnEvict callback that panics (once) while a Set reports the value it
// replaced, with the panic recovered by the caller (as net/http does for a
// handler), must not leave the cache unable to hold its bound.
func TestOnEvictPanicInSetBreaksBound(t *testing.T) {
	panicNext := false
	c := ctNew(t, Options[int, string]{
		MaxEntries: 4,
		OnEvict: func(k int, v string, cause Cause) {
			if panicNext {
				panicNext = false
				panic("callback failed")
			}
		},
	})
	c.Close() // maintenance only on this goroutine
	c.Set(1, "a")
	func() {
		defer func() { recover() }()
		panicNext = true
		c.Set(1, "b") // replaces "a": the report panics
	}()
	if v, ok := c.Get(1); !ok || v != "b" {
		t.Fatalf("Get(1) = %q, %v; want the stored value b", v, ok)
	}
	// Churn through many other keys: the bound must hold after maintenance.
	for k := 2; k < 1000; k++ {
		c.Set(k, "x")
	}
	s := c.Stats() // applies every pending write
	if s.Entries > 4 {
		t.Errorf("after churn the cache holds %d entries, bound 4 (stats %+v)", s.Entries, s)
	}
	if _, ok := c.Get(1); ok {
		t.Logf("key 1 survived 998 newer keys in a cache of 4")
	}
	if err := c.checkInvariants(); err != nil {
		t.Errorf("invariants: %v", err)
	}
}

// The same, for a key rewritten after the panic: its later entries wait
// for a write record that never comes, so the key is never evicted again.
func TestOnEvictPanicInSetLeaksRewrites(t *testing.T) {
	panicNext := false
	c := ctNew(t, Options[int, string]{
		MaxEntries: 4,
		OnEvict: func(k int, v string, cause Cause) {
			if panicNext {
				panicNext = false
				panic("callback failed")
			}
		},
	})
	c.Close()
	c.Set(1, "a")
	func() {
		defer func() { recover() }()
		panicNext = true
		c.Set(1, "b")
	}()
	c.Set(1, "c") // replaces the untracked entry: its record waits forever
	for k := 2; k < 1000; k++ {
		c.Set(k, "x")
	}
	c.settle()
	if err := c.checkInvariants(); err != nil {
		t.Errorf("invariants: %v", err)
	}
	if n := c.Len(); n > 4 {
		t.Errorf("Len = %d, bound 4", n)
	}
}

// A panicking OnEvict during Clear loses the reports of every other
// entry that Clear removed: they are neither reported nor in the cache.
func TestOnEvictPanicInClearLosesReports(t *testing.T) {
	panicNext := false
	reported := map[int]bool{}
	c := ctNew(t, Options[int, string]{
		OnEvict: func(k int, v string, cause Cause) {
			reported[k] = true
			if panicNext {
				panicNext = false
				panic("callback failed")
			}
		},
	})
	c.Close()
	for k := range 5 {
		c.Set(k, "v")
	}
	func() {
		defer func() { recover() }()
		panicNext = true
		c.Clear()
	}()
	if c.Len() != 0 {
		t.Fatalf("Len = %d after Clear", c.Len())
	}
	if len(reported) != 5 {
		t.Errorf("Clear removed 5 entries, OnEvict saw %d of them (%v); stats %+v", len(reported), reported, c.Stats())
	}
}
