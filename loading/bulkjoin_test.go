package loading

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A BulkLoader that returns a *BulkError joined with another error (its
// per-key failures and a failure of the whole call, say a lost database
// connection) fails the keys absent from both the map and the BulkError
// with that error: they are not remembered as not found.
func TestBulkErrorJoined(t *testing.T) {
	dbErr := errors.New("connection lost")
	keyErr := errors.New("key 2 failed")
	for _, tc := range []struct {
		name string
		err  func(be error) error
		// wantDB: key 3 fails with dbErr; otherwise it is not found.
		wantDB bool
	}{
		{"joined", func(be error) error { return errors.Join(be, dbErr) }, true},
		{"joined first", func(be error) error { return errors.Join(dbErr, be) }, true},
		{"plain", func(be error) error { return be }, false},
		{"wrapped", func(be error) error { return fmt.Errorf("users: %w", be) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Must(Options[int, string]{TTL: time.Minute, BulkLoader: BulkLoaderFunc[int, string](
				func(ctx context.Context, keys []int) (map[int]string, error) {
					be := &BulkError[int]{Errors: map[int]error{2: keyErr}}
					return map[int]string{1: "v1"}, tc.err(be)
				})})
			defer c.Close()
			m, err := c.GetMany(context.Background(), []int{1, 2, 3})
			var be *BulkError[int]
			if !errors.As(err, &be) || m[1] != "v1" || len(m) != 1 {
				t.Fatalf("GetMany = %v, %v", m, err)
			}
			if !errors.Is(be.Errors[2], keyErr) {
				t.Fatalf("key 2's error = %v, want %v", be.Errors[2], keyErr)
			}
			e3 := be.Errors[3]
			if tc.wantDB {
				if !errors.Is(e3, dbErr) || errors.Is(e3, ErrNotFound) {
					t.Fatalf("key 3's error = %v; want the call's failure (%v), not a not-found answer", e3, dbErr)
				}
			} else if !errors.Is(e3, ErrNotFound) {
				t.Fatalf("key 3's error = %v; want not found", e3)
			}
			if s := c.Stats(); s.LoadErrors != 1 {
				t.Fatalf("LoadErrors = %d, want 1", s.LoadErrors)
			}
		})
	}
}
