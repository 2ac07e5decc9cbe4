package redis

import (
	"context"
	"testing"
	"time"
)

// Before any sample there is no bound; the smallest sample makes it, with
// 2 ms for the clocks' rounding; a reset replaces even a smaller one.
func TestServerClockEstimate(t *testing.T) {
	s := newServerClock()
	deadline := time.UnixMilli(1_000_000)
	if l, _ := s.latest(deadline, true); l != 0 {
		t.Fatalf("latest without samples = %d; want 0 (no bound)", l)
	}
	sent := time.Now()
	s.observe(sent, sent.UnixMilli()+500)
	s.observe(sent, sent.UnixMilli()+300)
	s.observe(sent, sent.UnixMilli()+400)
	if l, _ := s.latest(deadline, true); l != 1_000_000+300+2 {
		t.Errorf("latest = %d; want the deadline + the smallest sample (300) + 2", l)
	}
	if l, _ := s.latest(time.Time{}, false); l != 0 {
		t.Errorf("latest without a deadline = %d; want 0", l)
	}
	s.reset(sent, sent.UnixMilli()+900)
	if l, settle := s.latest(deadline, true); l != 1_000_000+900+2 || settle.Before(deadline.Add(3*time.Millisecond)) {
		t.Errorf("latest after a reset = %d, settle %v; want %d, at least 3ms past the deadline", l, settle, 1_000_000+900+2)
	}
}

// An estimate that puts the server's clock far behind its true time (as
// after the server's clock stepped forward) makes the script refuse a
// write that reached it in time: the write is sent again with an estimate
// from that answer, and lands.
func TestWriteAfterServerClockMovedForward(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	bt, _ := newByteTier(t, cl, nil)
	ctx := context.Background()
	if err := bt.Set(ctx, []byte("k"), []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	bt.clockOf(ctx, bt.prefix+"k").reset(sent, sent.UnixMilli()-time.Hour.Milliseconds()) // an hour behind
	if err := bt.Set(ctx, []byte("k"), []byte("v2"), time.Hour); err != nil {
		t.Fatalf("Set after the estimate went wrong: %v", err)
	}
	if v, _, hit, err := bt.Get(ctx, nil, []byte("k")); !hit || err != nil || string(v) != "v2" {
		t.Errorf("Get = %q, %v, %v; want v2", v, hit, err)
	}
	if l, _ := bt.clockOf(ctx, bt.prefix+"k").latest(time.Now(), true); l < time.Now().UnixMilli()-time.Minute.Milliseconds() {
		t.Errorf("the estimate still puts the server an hour behind (latest %d)", l)
	}
}
