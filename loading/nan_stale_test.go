package loading

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// A NaN key can never be found in the flight table again, so its flight is
// never taken out: every Get of a NaN key leaks a flight (and its value).
func TestNaNKeyLeaksFlights(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCache(t, Options[float64, string]{
			Loader: LoaderFunc[float64, string](func(ctx context.Context, k float64) (string, error) { return "v", nil }),
		})
		for range 1000 {
			if v, err := c.Get(context.Background(), math.NaN()); v != "v" || err != nil {
				t.Fatalf("Get(NaN) = %q, %v", v, err)
			}
		}
		c.GetMany(context.Background(), []float64{math.NaN(), math.NaN()})
		n := 0
		for i := range c.shards {
			sh := &c.shards[i]
			sh.mu.Lock()
			n += len(sh.flights)
			sh.mu.Unlock()
		}
		if n != 0 {
			t.Fatalf("%d flights left in the table after every load finished; want 0", n)
		}
	})
}

// With ErrorTTL < 0, a failed reload of a stale value is not reflected in
// the stale error: errors.Is(err, sourceErr) does not hold although the last
// reload failed with sourceErr.
func TestStaleErrorWithoutErrorCaching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 1 {
				return "v", nil
			}
			return "", errSource
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Minute, MaxStale: time.Hour, ErrorTTL: -1})
		mustGet(t, c, 1, "v")
		time.Sleep(2 * time.Minute)
		if v, err := c.Get(context.Background(), 1); v != "v" || !errors.Is(err, ErrStale) {
			t.Fatalf("Get = %q, %v; want the stale value", v, err)
		}
		synctest.Wait() // the reload has failed
		if src.count(1) != 2 {
			t.Fatalf("%d loads", src.count(1))
		}
		v, err := c.Get(context.Background(), 1)
		if v != "v" || !errors.Is(err, ErrStale) || !errors.Is(err, errSource) {
			t.Fatalf("Get after a failed reload = %q, %v; want the stale value with an error wrapping ErrStale and the reload's failure", v, err)
		}
	})
}
