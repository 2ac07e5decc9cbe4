package redis

import (
	"context"
	"errors"
	"testing"

	"github.com/cachekit/cachekit/loading"
)

// A Loader that panicked was counted in Stats.Loads but not in
// Stats.LoadErrors (counted after Load returned), while Stats.Local
// counted the failure.
func TestPanickingLoaderCountsInLoadErrors(t *testing.T) {
	s := standalone(t)
	cl, _ := backend{addrs: []string{s.Addr()}}.client(t)
	loader := loading.LoaderFunc[string, string](func(ctx context.Context, k string) (string, error) {
		panic("loader bug")
	})
	c := newTier(t, cl, loader, nil)
	_, err := c.Get(context.Background(), "k")
	var pe *loading.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Get = %v, want a *loading.PanicError", err)
	}
	st := c.Stats()
	if st.Loads != 1 || st.Local.LoadErrors != 1 || st.LoadErrors != 1 {
		t.Fatalf("after one Loader call that panicked: Loads %d, LoadErrors %d (Local.LoadErrors %d); want 1, 1 (1)",
			st.Loads, st.LoadErrors, st.Local.LoadErrors)
	}
}
