package cachekit

import "testing"

// Delete and Set report the entry they remove, and tell whether it had
// expired by the Clock; an entry without a TTL never expires, so its
// report must not depend on the Clock: a Clock that panics (recovered by
// the caller) lost the report and the count of an entry that had left the
// cache, which Delete and Set read before reporting it.
func TestClockPanicInRemovalOfUntimedEntry(t *testing.T) {
	clock := &panicClock{fakeClock: newFakeClock()}
	var got []string
	c := Must(Options[int, string]{
		MaxEntries: 10,
		Clock:      clock,
		OnEvict:    func(k int, v string, cause Cause) { got = append(got, v+" "+cause.String()) },
	})
	c.Close() // maintenance runs on this goroutine only
	c.Set(1, "a")
	c.Set(2, "b")
	c.settle()
	// The Clock panics at its next read: in the maintenance pass that
	// Delete and Set run after their report, if not before it.
	clock.arm(1)
	ctRecover(func() { c.Delete(1) })
	clock.arm(1)
	ctRecover(func() { c.Set(2, "c") })
	clock.arm(0)
	if len(got) != 2 || got[0] != "a deleted" || got[1] != "b replaced" {
		t.Errorf("OnEvict saw %q, want [a deleted b replaced]", got)
	}
	if s := c.Stats(); s.Deleted != 1 || s.Replaced != 1 {
		t.Errorf("Stats: Deleted %d, Replaced %d; want 1 and 1", s.Deleted, s.Replaced)
	}
}
