package cachekit

import (
	"testing"
	"time"
)

// Delete and Set read the Clock to tell whether the entry with a TTL they
// removed had expired: a Clock that panics there (recovered by the
// caller) must not lose the report and the count of an entry that has
// left the index. It is reported with the caller's cause.
func TestClockPanicInRemovalOfTimedEntry(t *testing.T) {
	clock := &panicClock{fakeClock: newFakeClock()}
	var got []string
	c := Must(Options[int, string]{
		MaxEntries: 10,
		Clock:      clock,
		OnEvict:    func(k int, v string, cause Cause) { got = append(got, v+" "+cause.String()) },
	})
	c.Close() // maintenance runs on this goroutine only
	c.SetWithTTL(1, "a", time.Minute)
	c.SetWithTTL(2, "b", time.Minute)
	c.settle()
	// The Clock panics at its next read: the one that checks whether the
	// removed entry had expired.
	clock.arm(1)
	if p := ctRecover(func() { c.Delete(1) }); p == nil {
		t.Fatal("setup: the clock did not panic in Delete")
	}
	clock.arm(1)
	if p := ctRecover(func() { c.Set(2, "c") }); p == nil {
		t.Fatal("setup: the clock did not panic in Set")
	}
	clock.arm(0)
	if len(got) != 2 || got[0] != "a deleted" || got[1] != "b replaced" {
		t.Errorf("OnEvict saw %q, want [a deleted b replaced]", got)
	}
	if s := c.Stats(); s.Deleted != 1 || s.Replaced != 1 {
		t.Errorf("Stats: Deleted %d, Replaced %d; want 1 and 1", s.Deleted, s.Replaced)
	}
	if v, ok := c.Get(2); !ok || v != "c" {
		t.Errorf("Get(2) = %q, %v; want c, true", v, ok)
	}
	if n := c.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
}
