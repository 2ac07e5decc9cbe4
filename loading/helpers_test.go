package loading

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bubbleClock reads time.Now, which inside a synctest bubble is the
// bubble's fake clock. Giving it to the cache (rather than leaving Clock
// nil) also keeps the core cache on its one-second maintenance tick instead
// of its millisecond clock tick, so long fake sleeps stay cheap.
type bubbleClock struct{}

func (bubbleClock) Now() time.Time { return time.Now() }

// newCache returns a cache for opts, with the bubble's clock unless opts
// has one, closed when the test ends (inside the bubble).
func newCache[K comparable, V any](t *testing.T, opts Options[K, V]) *Cache[K, V] {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = bubbleClock{}
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// source is a test loader: it counts calls per key, remembers when each
// call started, and answers with fn (by default "v<key>.<call number>").
type source struct {
	mu    sync.Mutex
	calls map[int]int
	times []time.Duration // since start, of every call
	start time.Time
	total atomic.Int64
	fn    func(ctx context.Context, key, n int) (string, error)
}

func newSource(fn func(ctx context.Context, key, n int) (string, error)) *source {
	return &source{calls: map[int]int{}, start: time.Now(), fn: fn}
}

func (s *source) Load(ctx context.Context, key int) (string, error) {
	s.mu.Lock()
	s.calls[key]++
	n := s.calls[key]
	s.times = append(s.times, time.Since(s.start))
	s.mu.Unlock()
	s.total.Add(1)
	if s.fn != nil {
		return s.fn(ctx, key, n)
	}
	return fmt.Sprintf("v%d.%d", key, n), nil
}

func (s *source) count(key int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[key]
}

func (s *source) callTimes() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.times...)
}

// bulkSource is a test bulk loader: it counts, per key, how many calls
// asked for it, and keeps every call's keys.
type bulkSource struct {
	mu    sync.Mutex
	calls [][]int
	keys  map[int]int
	fn    func(ctx context.Context, keys []int) (map[int]string, error)
}

func newBulkSource(fn func(ctx context.Context, keys []int) (map[int]string, error)) *bulkSource {
	return &bulkSource{keys: map[int]int{}, fn: fn}
}

func (s *bulkSource) LoadMany(ctx context.Context, keys []int) (map[int]string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, append([]int(nil), keys...))
	for _, k := range keys {
		s.keys[k]++
	}
	s.mu.Unlock()
	if s.fn != nil {
		return s.fn(ctx, keys)
	}
	m := make(map[int]string, len(keys))
	for _, k := range keys {
		m[k] = fmt.Sprintf("v%d", k)
	}
	return m, nil
}

func (s *bulkSource) snapshot() (calls [][]int, keys map[int]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys = make(map[int]int, len(s.keys))
	for k, n := range s.keys {
		keys[k] = n
	}
	return append([][]int(nil), s.calls...), keys
}

func keyRange(lo, hi int) []int {
	ks := make([]int, 0, hi-lo+1)
	for k := lo; k <= hi; k++ {
		ks = append(ks, k)
	}
	return ks
}

// mustGet fails the test unless Get returns want with a nil error.
func mustGet(t *testing.T, c *Cache[int, string], key int, want string) {
	t.Helper()
	got, err := c.Get(context.Background(), key)
	if err != nil || got != want {
		t.Fatalf("Get(%d) = %q, %v; want %q, nil", key, got, err, want)
	}
}
