package redis

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A ByteTier call that the caller's deadline ends, while Redis hangs,
// returns an error wrapping context.DeadlineExceeded, as Get's doc
// promises ("an error wrapping ctx.Err()"). The deadline, earlier than
// Timeout, is also the socket's: the GET (or SET) failed with the socket's
// "i/o timeout" at the same instant as ctx's own timer, and that error,
// returned as it was, won about half the time.
func TestCallerDeadlineErrorWrapsDeadlineExceeded(t *testing.T) {
	checkLeaks(t)
	srv := private(t)
	wire := newWireWatch("get")
	cl := heldClient(t, srv, wire)
	bt, _ := newByteTier(t, cl, func(o *ByteTierOptions) { o.Timeout = time.Hour })
	waitTierSubscribed(t, bt)
	pause(t, srv, cl) // Redis hangs from now on; only the caller's deadline ends a call
	for i := range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_, _, found, err := bt.Get(ctx, nil, []byte("k"))
		cancel()
		if found || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get %d past its deadline while Redis hangs = found %v, %v; want an error wrapping context.DeadlineExceeded", i, found, err)
		}
	}
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		err := bt.Set(ctx, []byte("k"), []byte("v"), time.Minute)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Set %d past its deadline while Redis hangs = %v; want an error wrapping context.DeadlineExceeded", i, err)
		}
	}
}
