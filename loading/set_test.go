package loading

import (
	"context"
	"sync/atomic"
	"testing"
)

// A Set whose Weigher panics stores nothing: it must not overtake the load
// of the key in flight either, whose result would then be thrown away (and
// the key loaded again by the next Get).
func TestSetWeigherPanicKeepsLoad(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	var loads atomic.Int32
	c := Must(Options[int, string]{MaxWeight: 100,
		Weigher: func(k int, v string) uint32 {
			if v == "boom" {
				panic("weigher failed")
			}
			return 1
		},
		Loader: LoaderFunc[int, string](func(ctx context.Context, key int) (string, error) {
			if loads.Add(1) == 1 {
				close(started)
				<-release
			}
			return "loaded", nil
		})})
	defer c.Close()
	got := make(chan string)
	go func() {
		v, _ := c.Get(context.Background(), 1)
		got <- v
	}()
	<-started
	if p := recovered(func() { c.Set(1, "boom") }); p == nil {
		t.Fatal("the Weigher did not panic")
	}
	close(release)
	if v := <-got; v != "loaded" {
		t.Fatalf("Get = %q, want loaded", v)
	}
	if v, err := c.Get(context.Background(), 1); v != "loaded" || err != nil {
		t.Fatalf("second Get = %q, %v", v, err)
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("the key was loaded %d times: the load in flight during a Set whose Weigher panicked (storing nothing) was thrown away", n)
	}
}
