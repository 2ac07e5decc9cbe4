package loading

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A Clock that reads earlier than the cache's creation (a wall clock stepped
// back, a fake clock set back) must not make what is loaded meanwhile live
// forever: values, remembered errors and not-found answers all keep their
// lifetimes.
func TestClockBeforeStartKeepsLifetimes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	src := newSource(func(ctx context.Context, key, n int) (string, error) {
		switch {
		case key == 2 && n == 1:
			return "", boom
		case key == 3 && n == 1:
			return "", ErrNotFound
		}
		return fmt.Sprintf("v%d.%d", key, n), nil
	})
	clk := &stepClock{t: t0}
	c, err := New(Options[int, string]{
		Loader: src, Clock: clk,
		TTL: time.Minute, ErrorTTL: time.Second, NotFoundTTL: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clk.add(-time.Second) // the clock steps back 1s
	mustGet(t, c, 1, "v1.1")
	if _, err := c.Get(context.Background(), 2); !errors.Is(err, boom) {
		t.Fatalf("Get(2) = %v; want boom", err)
	}
	if _, err := c.Get(context.Background(), 3); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(3) = %v; want ErrNotFound", err)
	}
	clk.add(time.Hour) // long past every lifetime
	mustGet(t, c, 1, "v1.2")
	mustGet(t, c, 2, "v2.2")
	mustGet(t, c, 3, "v3.2")
}

// nilUnwrapErr is a classic Go mistake: a loader returning a typed nil
// pointer as its error. Its Unwrap dereferences the receiver.
type nilUnwrapErr struct{ err error }

func (e *nilUnwrapErr) Error() string { return "nilUnwrapErr" }
func (e *nilUnwrapErr) Unwrap() error { return e.err }

// A loader whose error panics when inspected (here: a typed nil pointer
// whose Unwrap dereferences it) must fail the waiters, like a loader that
// panics, not crash the program from a goroutine of the cache.
func TestLoaderErrorPanicsWhenInspected(t *testing.T) {
	clk := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := New(Options[int, string]{
		Clock: clk,
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
			var e *nilUnwrapErr
			return "", e
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Get(context.Background(), 1)
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Get = %v, want a *PanicError", err)
	}
}

// The same through a BulkLoader: errors.As(err, &*BulkError) walks Unwrap.
func TestBulkLoaderErrorPanicsWhenInspected(t *testing.T) {
	clk := &stepClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := New(Options[int, string]{
		Clock: clk,
		BulkLoader: BulkLoaderFunc[int, string](func(ctx context.Context, keys []int) (map[int]string, error) {
			var e *nilUnwrapErr
			return nil, e
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.GetMany(context.Background(), []int{1, 2})
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("GetMany = %v, want a *PanicError for its keys", err)
	}
}
