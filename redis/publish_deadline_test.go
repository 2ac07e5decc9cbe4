package redis

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// failPublishAtDeadline lets a pipeline run, then, for one that publishes,
// waits for the call's context to end and fails the PUBLISH as a socket
// does at that deadline: with an i/o timeout that wraps no context error.
type failPublishAtDeadline struct{}

func (failPublishAtDeadline) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (failPublishAtDeadline) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return next
}
func (failPublishAtDeadline) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if strings.EqualFold(cmd.Name(), "publish") {
				<-ctx.Done()
				cmd.SetErr(errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"))
			}
		}
		return err
	}
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
	cl.AddHook(failPublishAtDeadline{})
	c := newTier(t, cl, newSource(), func(o *Options[string]) { o.Timeout = 10 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := c.Set(ctx, "k", "v")
	if err == nil || !strings.Contains(err.Error(), "publishing") {
		t.Fatalf("Set = %v; want the publish's error", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Set = %v; want an error wrapping context.DeadlineExceeded (the caller's deadline ended the publish)", err)
	}
}
