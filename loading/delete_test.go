package loading

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A Delete of one key while a GetMany's bulk load of it is in flight: the
// GetMany still gets every value, but the deleted key's result is not
// stored (the next Get loads it again); the other keys of the call are.
func TestDeleteDuringBulkLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		calls := 0
		bulk := newBulkSource(func(ctx context.Context, keys []int) (map[int]string, error) {
			calls++
			n := calls
			if n == 1 {
				<-gate
			}
			m := make(map[int]string, len(keys))
			for _, k := range keys {
				m[k] = fmt.Sprintf("v%d.%d", k, n)
			}
			return m, nil
		})
		c := newCache(t, Options[int, string]{BulkLoader: bulk})
		type result struct {
			m   map[int]string
			err error
		}
		done := make(chan result, 1)
		go func() {
			m, err := c.GetMany(context.Background(), []int{1, 2, 3})
			done <- result{m, err}
		}()
		synctest.Wait() // the bulk load is at the gate
		c.Delete(2)
		close(gate)
		r := <-done
		if r.err != nil || len(r.m) != 3 || r.m[2] != "v2.1" {
			t.Fatalf("GetMany = %v, %v; want the three loaded values", r.m, r.err)
		}
		if _, ok := c.core.Peek(2); ok {
			t.Fatal("the deleted key's result was stored")
		}
		mustGet(t, c, 1, "v1.1")
		mustGet(t, c, 3, "v3.1")
		mustGet(t, c, 2, "v2.2") // loaded again
	})
}

// A Delete while a background reload (refresh ahead) of the key is in
// flight: the reload's result is not stored, and the next Get loads again.
func TestDeleteDuringRefresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		src := newSource(func(ctx context.Context, key, n int) (string, error) {
			if n == 2 {
				<-gate
			}
			return fmt.Sprintf("v%d.%d", key, n), nil
		})
		c := newCache(t, Options[int, string]{Loader: src, TTL: time.Hour, RefreshAfter: time.Minute})
		mustGet(t, c, 1, "v1.1")
		time.Sleep(2 * time.Minute)
		mustGet(t, c, 1, "v1.1") // due: starts the reload, which waits at the gate
		synctest.Wait()
		c.Delete(1)
		close(gate)
		synctest.Wait() // the reload has finished
		if _, ok := c.core.Peek(1); ok {
			t.Fatal("the reload overtaken by Delete stored its result")
		}
		mustGet(t, c, 1, "v1.3")
		if s := c.Stats(); s.Refreshes != 1 || s.Loads != 3 {
			t.Fatalf("stats %+v; want 1 refresh, 3 loads", s)
		}
	})
}
