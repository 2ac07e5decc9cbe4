package redis

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// The largest Duration is a valid TTL, and a Local.TTL longer than TTL is
// refused however long it is: the float64 arithmetic of the jitter's
// stretch must not overflow into negative durations.
func TestHugeTTLOptions(t *testing.T) {
	cl := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer cl.Close()
	ld := loading.LoaderFunc[string, string](func(context.Context, string) (string, error) { return "", nil })

	o := Options[string]{Client: cl, Loader: ld, TTL: math.MaxInt64}
	if err := o.resolve(); err != nil || o.Local.TTL != DefaultLocalTTL {
		t.Errorf("TTL MaxInt64: Local.TTL %v, err %v; want %v, nil", o.Local.TTL, err, DefaultLocalTTL)
	}
	for _, tc := range []struct {
		local  time.Duration
		jitter float64
	}{
		{math.MaxInt64, 0}, // "L1 forever" with a 10-minute Redis TTL
		{7e18, 0.9},        // stretched past the largest Duration
		{math.MaxInt64 - 1, 0.5},
	} {
		o := Options[string]{Client: cl, Loader: ld, TTL: 10 * time.Minute}
		o.Local.TTL, o.Local.TTLJitter = tc.local, tc.jitter
		if err := o.resolve(); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("TTL 10m, Local.TTL %v, TTLJitter %v: err %v; want ErrInvalidOptions", tc.local, tc.jitter, err)
		}
	}
}
