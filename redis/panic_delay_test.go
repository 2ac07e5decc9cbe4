package redis

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A confirmed subscription that a handler's panic ends is lost "as if
// Redis had dropped it": the next attempt comes ResubscribeDelay later, as
// after any loss of a confirmed subscription. The panic used to skip the
// reset of the back-off, so each such loss doubled the pause (up to 32 ×
// ResubscribeDelay), while invalidations were missed.
func TestHandlerPanicDoesNotGrowResubscribeDelay(t *testing.T) {
	var mu sync.Mutex
	var pauses []time.Duration
	pauseHook = func(d time.Duration) {
		mu.Lock()
		pauses = append(pauses, d)
		mu.Unlock()
	}
	t.Cleanup(func() { pauseHook = nil }) // after checkLeaks': the subscribers have stopped
	checkLeaks(t)
	client := standaloneClient(t)
	const delay = 40 * time.Millisecond
	const panics = 6 // unreset, the pauses would add up to 40ms × (1+2+4+8+16+32) = 2.52s
	writer, _ := newByteTier(t, client, nil)
	bt, _ := newByteTier(t, client, func(o *ByteTierOptions) { o.ResubscribeDelay = delay })
	var calls atomic.Int64
	bt.SetHandlers(Handlers{
		Invalidate: func([]byte) {
			if calls.Add(1) <= panics {
				panic("Invalidate panics")
			}
		},
	})
	waitTierSubscribed(t, writer, bt)
	for i := 1; i <= panics; i++ {
		if err := writer.Set(context.Background(), []byte("k"), []byte(fmt.Sprint(i)), time.Minute); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the subscription lost and confirmed again", func() bool {
			st := bt.Stats()
			return st.SubscriptionLosses == uint64(i) && st.Subscriptions == uint64(i+1) && st.Subscribed
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pauses) != panics {
		t.Fatalf("pauses %v: want one per panic (%d)", pauses, panics)
	}
	for i, d := range pauses {
		if d != delay {
			t.Errorf("pause after panic %d: %v, want ResubscribeDelay (%v): the delay grew (all: %v)", i+1, d, delay, pauses)
		}
	}
}
