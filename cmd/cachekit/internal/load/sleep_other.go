//go:build !linux

package load

import (
	"context"
	"errors"
	"time"
)

// preciseSleeper is the runtime's timer where timerfd is not available.
type preciseSleeper struct{}

func newPreciseSleeper(context.Context) (*preciseSleeper, error) {
	return nil, errors.New("no timerfd")
}

func (*preciseSleeper) close() {}

func (*preciseSleeper) sleepUntil(ctx context.Context, t time.Time) bool {
	return realClock{}.SleepUntil(ctx, t)
}
