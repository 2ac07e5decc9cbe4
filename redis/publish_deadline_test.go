package redis

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// failPublishAtDeadline lets a pipeline run, then, for one that publishes,
// ends the caller's deadline (end), waits for the call's context to end
// and fails the PUBLISH as a socket does at that deadline: with an i/o
// timeout that wraps no context error.
type failPublishAtDeadline struct{ end func() }

func (failPublishAtDeadline) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (failPublishAtDeadline) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return next
}
func (h failPublishAtDeadline) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if strings.EqualFold(cmdName(cmd), "publish") {
				h.end()
				<-ctx.Done()
				cmd.SetErr(errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"))
			}
		}
		return err
	}
}

// endingContext is a caller's context whose deadline passes when end is
// called, and not before: a real deadline (it was 20ms) could pass on a
// loaded machine before the write had landed, failing the write instead
// of the publish. Once ended, Err is context.DeadlineExceeded.
type endingContext struct {
	context.Context // cancelled by end
	cancel          context.CancelFunc
	mu              sync.Mutex
	d               time.Time
}

func newEndingContext() *endingContext {
	ctx, cancel := context.WithCancel(context.Background())
	return &endingContext{Context: ctx, cancel: cancel, d: time.Now().Add(time.Hour)}
}

func (c *endingContext) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.d, true
}

func (c *endingContext) Err() error {
	if c.Context.Err() != nil {
		return context.DeadlineExceeded
	}
	return nil
}

// end moves the deadline to now and ends the context.
func (c *endingContext) end() {
	c.mu.Lock()
	if c.Context.Err() == nil {
		c.d = time.Now()
	}
	c.mu.Unlock()
	c.cancel()
}

// A Set whose write succeeded but whose invalidation's publish was ended by
// the caller's deadline returned the socket's error as it was: the caller
// could not tell, with errors.Is, that its own deadline ended the call, as
// it can when the write fails so. The publish's error now wraps
// context.DeadlineExceeded too.
func TestPublishEndedByCallerDeadlineWrapsDeadlineExceeded(t *testing.T) {
	s := standalone(t)
	cl := goredis.NewClient(&goredis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = cl.Close() })
	ctx := newEndingContext()
	defer ctx.end()
	cl.AddHook(failPublishAtDeadline{end: ctx.end})
	c := newTier(t, cl, newSource(), func(o *Options[string]) { o.Timeout = 10 * time.Second })
	err := c.Set(ctx, "k", "v")
	if err == nil || !strings.Contains(err.Error(), "publishing") {
		t.Fatalf("Set = %v; want the publish's error", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Set = %v; want an error wrapping context.DeadlineExceeded (the caller's deadline ended the publish)", err)
	}
}
