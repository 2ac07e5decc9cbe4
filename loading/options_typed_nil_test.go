package loading_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachekit/cachekit"
	"github.com/cachekit/cachekit/loading"
)

// nilableClock is a fake clock with a pointer receiver: a nil
// *nilableClock in Options.Clock is a typed nil.
type nilableClock struct{ t time.Time }

func (c *nilableClock) Now() time.Time { return c.t }

// newRecovered calls loading.New, turning a panic that escapes it into a
// test failure.
func newRecovered(t *testing.T, opts loading.Options[int, int]) (*loading.Cache[int, int], error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("New panicked: %v", p)
		}
	}()
	return loading.New(opts)
}

// New panicked when Options.Clock was a typed nil: it read the clock
// unguarded. It returns an error wrapping cachekit.ErrInvalidOptions.
func TestNewRefusesTypedNilClock(t *testing.T) {
	loader := loading.LoaderFunc[int, int](func(context.Context, int) (int, error) { return 1, nil })
	c, err := newRecovered(t, loading.Options[int, int]{Loader: loader, Clock: (*nilableClock)(nil)})
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, cachekit.ErrInvalidOptions) || c != nil {
		t.Fatalf("New with a typed-nil Clock: a cache returned: %v, error %v; want only an error wrapping cachekit.ErrInvalidOptions", c != nil, err)
	}
}

// A nil LoaderFunc or BulkLoaderFunc (a loader variable left unset) passed
// the check "Loader or BulkLoader is required": New returned a cache whose
// every Get failed with a recovered nil-pointer panic. New refuses them.
func TestNewRefusesNilLoaderFunc(t *testing.T) {
	for name, opts := range map[string]loading.Options[int, int]{
		"LoaderFunc(nil)":     {Loader: loading.LoaderFunc[int, int](nil)},
		"BulkLoaderFunc(nil)": {BulkLoader: loading.BulkLoaderFunc[int, int](nil)},
	} {
		c, err := newRecovered(t, opts)
		if c != nil {
			c.Close()
		}
		if !errors.Is(err, cachekit.ErrInvalidOptions) || c != nil {
			t.Errorf("New(%s): a cache returned: %v, error %v; want only an error wrapping cachekit.ErrInvalidOptions", name, c != nil, err)
		}
	}
}
