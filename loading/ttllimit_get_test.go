package loading

import (
	"context"
	"testing"
	"time"
)

// TTLLimit reads back what LimitTTL set on a loader call's context: the
// shortest bound, zero and negative ones as zero, and nothing for other
// contexts.
func TestTTLLimitReadsLimitTTL(t *testing.T) {
	if _, ok := TTLLimit(context.Background()); ok {
		t.Error("TTLLimit of a context that is no loader call's: ok")
	}
	var nilCtx context.Context // nil: handled
	if _, ok := TTLLimit(nilCtx); ok {
		t.Error("TTLLimit(nil): ok")
	}
	type seen struct {
		d  time.Duration
		ok bool
	}
	var got []seen
	c := Must(Options[int, int]{Loader: LoaderFunc[int, int](func(ctx context.Context, k int) (int, error) {
		d, ok := TTLLimit(ctx)
		got = append(got, seen{d, ok})
		LimitTTL(ctx, 5*time.Second)
		LimitTTL(ctx, time.Minute)
		d, ok = TTLLimit(ctx)
		got = append(got, seen{d, ok})
		LimitTTL(ctx, -time.Second)
		d, ok = TTLLimit(ctx)
		got = append(got, seen{d, ok})
		return k, nil
	}), TTL: time.Hour})
	defer c.Close()
	if _, err := c.Get(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	want := []seen{{-1, false}, {5 * time.Second, true}, {0, true}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].ok != want[i].ok || got[i].ok && got[i].d != want[i].d {
			t.Errorf("step %d: TTLLimit = %v, %v; want %v, %v", i, got[i].d, got[i].ok, want[i].d, want[i].ok)
		}
	}
}
