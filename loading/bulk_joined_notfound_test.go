package loading

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A BulkLoader's *BulkError joined with a failure of the whole call
// (errors.Join(be, dbErr)) fails every key absent from the map and from
// be.Errors with that error. When be held an ErrNotFound for one key,
// those keys were remembered as not found (for NotFoundTTL, not ErrorTTL)
// and the call was not counted in LoadErrors: classifying the whole error,
// errors.Is saw through the join into be's per-key errors.
func TestBulkErrorJoinedWithNotFoundKeyFailsAbsentKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dbErr := errors.New("connection lost")
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			// Key 2 does not exist (an explicit answer); the connection
			// was lost before key 3 was read.
			be := &BulkError[int]{Errors: map[int]error{2: ErrNotFound}}
			return map[int]string{1: "v1"}, errors.Join(be, dbErr)
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk, TTL: time.Hour, ErrorTTL: time.Second, NotFoundTTL: time.Hour})
		m, err := c.GetMany(context.Background(), []int{1, 2, 3})
		var be *BulkError[int]
		if !errors.As(err, &be) || len(m) != 1 || m[1] != "v1" || !errors.Is(be.Errors[3], dbErr) {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if s := c.Stats(); s.LoadErrors != 1 {
			t.Errorf("LoadErrors = %d; want 1 (key 3 failed with %v)", s.LoadErrors, dbErr)
		}
		// Past ErrorTTL the failure of key 3 is forgotten: it is loaded again.
		time.Sleep(2 * time.Second)
		c.GetMany(context.Background(), []int{3})
		if calls, _ := bulk.snapshot(); len(calls) != 2 {
			t.Errorf("LoadMany calls %v; want key 3 reloaded after ErrorTTL (its failure was remembered as not found for NotFoundTTL)", calls)
		}
	})
}

// A whole-call error that itself says "not found", outside the BulkError,
// still leaves the absent keys not found.
func TestBulkErrorJoinedWithWholeNotFound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			be := &BulkError[int]{Errors: map[int]error{2: errors.New("bad row")}}
			return map[int]string{1: "v1"}, errors.Join(be, ErrNotFound)
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk, TTL: time.Hour, ErrorTTL: time.Second, NotFoundTTL: time.Hour})
		m, err := c.GetMany(context.Background(), []int{1, 2, 3})
		var be *BulkError[int]
		if !errors.As(err, &be) || len(m) != 1 || !errors.Is(be.Errors[3], ErrNotFound) || errors.Is(be.Errors[2], ErrNotFound) {
			t.Fatalf("GetMany = %v, %v", m, err)
		}
		if s := c.Stats(); s.LoadErrors != 1 {
			t.Errorf("LoadErrors = %d; want 1 (key 2's failure)", s.LoadErrors)
		}
		// Key 3 stays not found past ErrorTTL (NotFoundTTL is an hour).
		time.Sleep(2 * time.Second)
		if _, err := c.Get(context.Background(), 3); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(3) = %v; want ErrNotFound, remembered", err)
		}
		if calls, _ := bulk.snapshot(); len(calls) != 1 {
			t.Errorf("LoadMany calls %v; want 1 (key 3 remembered as not found)", calls)
		}
	})
}
