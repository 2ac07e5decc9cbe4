package redis

import (
	"context"
	"testing"
	"time"
)

// Before any sample there is no bound; the smallest sample makes it, with
// 2 ms for the clocks' rounding, and settle follows the sample's round
// trip.
func TestServerClockEstimate(t *testing.T) {
	s := newServerClock()
	deadline := time.UnixMilli(1_000_000)
	if l, _ := s.latest(deadline, true); l != 0 {
		t.Fatalf("latest without samples = %d; want 0 (no bound)", l)
	}
	s.observe(sample{off: 500, rtt: time.Millisecond})
	s.observe(sample{off: 300, rtt: 7 * time.Millisecond})
	s.observe(sample{off: 400, rtt: time.Millisecond})
	l, settle := s.latest(deadline, true)
	if l != 1_000_000+300+2 || !settle.Equal(deadline.Add(10*time.Millisecond)) {
		t.Errorf("latest, settle = %d, %v; want the deadline + the smallest sample (300) + 2, "+
			"and the deadline + its round trip (7ms) + 3ms", l, settle)
	}
	if l, _ := s.latest(time.Time{}, false); l != 0 {
		t.Errorf("latest without a deadline = %d; want 0", l)
	}
}

// An estimate that puts the server's clock far behind its true time (as
// after the server's clock stepped forward) makes the script refuse a
// write that reached it in time: the write is sent again, bounded by that
// answer, and lands.
func TestWriteAfterServerClockMovedForward(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	bt, _ := newByteTier(t, cl, nil)
	ctx := context.Background()
	if err := bt.Set(ctx, []byte("k"), []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	bt.clockAt(bt.nodeAddr(ctx, ctx, bt.prefix+"k")).observe(sample{off: -time.Hour.Milliseconds()}) // an hour behind
	if err := bt.Set(ctx, []byte("k"), []byte("v2"), time.Hour); err != nil {
		t.Fatalf("Set after the estimate went wrong: %v", err)
	}
	if v, _, hit, err := bt.Get(ctx, nil, []byte("k")); !hit || err != nil || string(v) != "v2" {
		t.Errorf("Get = %q, %v, %v; want v2", v, hit, err)
	}
}
