package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A failing source sees at most one call per key per ErrorTTL ([loading]
// issue), with TTLJitter too: the remembered failure's lifetime was
// jittered downwards as well (factor 1 ± TTLJitter/2), so with TTLJitter
// 0.5 and the lowest draw the source was called every 750ms with ErrorTTL
// 1s. Jitter now only lengthens a failure's lifetime. (Found by a review
// helper.)
func TestErrorTTLNotShortenedByJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			return "", errors.New("source down")
		})
		const errorTTL = time.Second
		c := newCache(t, Options[int, string]{Loader: src, ErrorTTL: errorTTL, TTL: time.Minute, TTLJitter: 0.5})
		c.rand = func() float64 { return 0 } // the lowest draw: deterministic
		for range 500 {
			c.Get(context.Background(), 1)
			time.Sleep(10 * time.Millisecond)
		}
		times := src.callTimes()
		for i := 1; i < len(times); i++ {
			if d := times[i] - times[i-1]; d < errorTTL {
				t.Fatalf("source called twice %v apart with ErrorTTL %v (calls at %v)", d, errorTTL, times)
			}
		}
	})
}
