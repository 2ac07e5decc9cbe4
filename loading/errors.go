package loading

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound is the answer a Loader gives for a key that does not
	// exist (return it, or an error wrapping it). The cache remembers the
	// answer as a negative entry for Options.NotFoundTTL, and Get returns
	// the loader's error, for which errors.Is(err, ErrNotFound) holds.
	ErrNotFound = errors.New("loading: not found")

	// ErrStale marks a stale value: Get returned a value together with an
	// error for which errors.Is(err, ErrStale) holds. The value is usable;
	// it is past its TTL (or was loaded before ExpireAll) but within
	// Options.MaxStale. A background reload of it is running, or has
	// failed (retried after Options.ErrorTTL), or was skipped (no free
	// slot under Options.MaxConcurrentRefreshes, or the caller's context
	// had already ended; retried by a later read). When the last reload failed, the
	// error also wraps that failure, so errors.Is(err, sourceErr) holds as
	// well.
	ErrStale = errors.New("loading: stale value")

	// ErrReentrant is returned when a loader asks the cache for a key that
	// its own call chain is loading, which would otherwise wait for itself
	// forever.
	ErrReentrant = errors.New("loading: loader asked the cache for a key it is loading")

	// ErrClosed is returned by Get and GetMany after Close, and to callers
	// waiting for a load that Close cancelled.
	ErrClosed = errors.New("loading: cache closed")
)

// errNilContext is returned by Get and GetMany for a nil context.Context
// (a programming error: pass context.Background() or context.TODO()).
var errNilContext = errors.New("loading: nil Context")

// PanicError is the error every waiter gets when a loader panics or calls
// runtime.Goexit, or when the user code that storing its result runs (the
// Weigher) does. It is not cached: the next Get of the key loads again.
type PanicError struct {
	// Value is the value the loader panicked with; nil after
	// runtime.Goexit.
	Value any
	// Goexit reports that the loader called runtime.Goexit (for example
	// through testing.T.FailNow) instead of returning.
	Goexit bool
	// Storing reports that the panic or Goexit came from storing the
	// loaded value (in the Weigher), not from the loader.
	Storing bool
	// Stack is the stack of the goroutine that panicked or called
	// runtime.Goexit, as formatted by runtime/debug.Stack.
	Stack []byte
}

// Error returns a one-line description; the stack is in Stack.
func (e *PanicError) Error() string {
	who := "loader"
	if e.Storing {
		who = "storing the loaded value"
	}
	if e.Goexit {
		return "loading: " + who + " called runtime.Goexit"
	}
	return fmt.Sprintf("loading: %s panicked: %v", who, e.Value)
}

// Unwrap returns the panic value if it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// BulkError carries per-key errors. GetMany returns it when some keys have
// no fresh value; a BulkLoader may return it to fail some keys of a call.
type BulkError[K comparable] struct {
	// Errors maps each failed key to its error. In a GetMany result, a key
	// that is also in the returned value map was served stale
	// (errors.Is(err, ErrStale)); every other key in Errors has no value.
	Errors map[K]error
}

// Error summarises the errors: their number and one of them.
func (e *BulkError[K]) Error() string {
	for k, err := range e.Errors {
		if len(e.Errors) == 1 {
			return fmt.Sprintf("loading: key %v: %v", k, err)
		}
		return fmt.Sprintf("loading: %d keys failed, among them %v: %v", len(e.Errors), k, err)
	}
	return "loading: no key failed"
}

// Unwrap returns every per-key error, so that errors.Is(err, target)
// reports whether any key failed with target.
func (e *BulkError[K]) Unwrap() []error {
	errs := make([]error, 0, len(e.Errors))
	for _, err := range e.Errors {
		errs = append(errs, err)
	}
	return errs
}
