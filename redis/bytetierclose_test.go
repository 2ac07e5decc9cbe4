package redis

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// gateContext is a caller's context whose first Deadline call, which
// ByteTier.Get makes after its check of Close and before its GET
// (callContext), blocks until release is closed, announcing it on entered.
type gateContext struct {
	context.Context
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (c *gateContext) Deadline() (time.Time, bool) {
	c.once.Do(func() {
		close(c.entered)
		<-c.release
	})
	return c.Context.Deadline()
}

// A ByteTier Get that passed its check of Close just before Close began
// sends nothing to Redis after Close has returned (against a client the
// caller may have closed since): it fails with ErrClosed, counted neither
// as an error nor by the breaker. Close did not wait for Gets, so the GET
// went out after it.
func TestByteTierGetRacingClose(t *testing.T) {
	checkLeaks(t)
	cl, cnt := backend{addrs: []string{standalone(t).Addr()}}.client(t)
	bt, _ := newByteTier(t, cl, nil)
	ctx := &gateContext{Context: context.Background(), entered: make(chan struct{}), release: make(chan struct{})}
	got := make(chan error, 1)
	go func() {
		_, _, _, err := bt.Get(ctx, nil, []byte("k"))
		got <- err
	}()
	<-ctx.entered // the Get is past its check of Close
	bt.Close()
	sent := cnt.n.Load()
	close(ctx.release)
	err := <-got
	if n := cnt.n.Load() - sent; n != 0 {
		t.Errorf("%d Redis commands sent after Close returned; want 0", n)
	}
	if !errors.Is(err, ErrClosed) {
		t.Errorf("Get racing Close: %v; want ErrClosed", err)
	}
	if st := bt.Stats(); st.L2Errors != 0 || st.L2Misses != 0 || st.Breaker != BreakerClosed {
		t.Errorf("after Close: L2Errors %d, L2Misses %d, breaker %v; want 0, 0, closed", st.L2Errors, st.L2Misses, st.Breaker)
	}
}

// getHold is a go-redis hook that holds the first GET sent alone until
// release is closed, announcing it on entered.
type getHold struct {
	held    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *getHold) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *getHold) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "get" && h.held.CompareAndSwap(false, true) {
			close(h.entered)
			<-h.release
		}
		return next(ctx, cmd)
	}
}
func (h *getHold) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// Close waits for a Get in flight (each ends within Timeout), as for a Set.
// (On the old code this fails only if Close has returned by the check,
// which it usually has; TestByteTierGetRacingClose is the deterministic
// one.)
func TestByteTierCloseWaitsForGet(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	bt, err := NewByteTier(ByteTierOptions{Client: cl, Prefix: testPrefix(t), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hold := &getHold{entered: make(chan struct{}), release: make(chan struct{})}
	cl.AddHook(hold)
	done := make(chan error)
	go func() {
		_, _, _, err := bt.Get(context.Background(), nil, []byte("k"))
		done <- err
	}()
	<-hold.entered
	closed := make(chan struct{})
	go func() { bt.Close(); close(closed) }()
	eventually(t, 10*time.Second, "Close has begun", func() bool {
		_, _, _, err := bt.Get(context.Background(), nil, []byte("other"))
		return errors.Is(err, ErrClosed)
	})
	select {
	case <-closed:
		t.Error("Close returned while a Get was reading")
	default:
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-closed
}
