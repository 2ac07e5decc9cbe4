package loading_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// A read-through cache in front of a "database" (here a map): the first Get
// of a key loads it, the next ones are served from the cache, and a missing
// key is remembered as not found.
func Example() {
	db := map[int]string{1: "alice", 2: "bob"}
	users, err := loading.New(loading.Options[int, string]{
		Loader: loading.LoaderFunc[int, string](func(ctx context.Context, id int) (string, error) {
			fmt.Println("db: select user", id)
			name, ok := db[id]
			if !ok {
				return "", fmt.Errorf("user %d: %w", id, loading.ErrNotFound)
			}
			return name, nil
		}),
		MaxEntries:  10_000,
		TTL:         5 * time.Minute,
		TTLJitter:   0.1,
		NotFoundTTL: time.Minute,
	})
	if err != nil {
		panic(err)
	}
	defer users.Close()

	ctx := context.Background()
	for _, id := range []int{1, 1, 3, 3} {
		name, err := users.Get(ctx, id)
		switch {
		case errors.Is(err, loading.ErrNotFound):
			fmt.Println("no user", id)
		case err != nil:
			fmt.Println("error:", err)
		default:
			fmt.Println("user", id, "is", name)
		}
	}
	s := users.Stats()
	fmt.Printf("loads %d, hits %d, remembered not-found %d\n", s.Loads, s.Hits, s.ErrorHits)
	// Output:
	// db: select user 1
	// user 1 is alice
	// user 1 is alice
	// db: select user 3
	// no user 3
	// no user 3
	// loads 2, hits 1, remembered not-found 1
}

// GetMany with a BulkLoader loads all the missing keys in one call; a key
// the loader does not return is not found.
func ExampleCache_GetMany() {
	db := map[string]int{"apple": 3, "pear": 5, "plum": 8}
	stock := loading.Must(loading.Options[string, int]{
		BulkLoader: loading.BulkLoaderFunc[string, int](func(ctx context.Context, keys []string) (map[string]int, error) {
			slices.Sort(keys)
			fmt.Println("db: select", keys)
			m := make(map[string]int, len(keys))
			for _, k := range keys {
				if n, ok := db[k]; ok {
					m[k] = n
				}
			}
			return m, nil
		}),
		TTL: time.Minute,
	})
	defer stock.Close()

	ctx := context.Background()
	stock.Get(ctx, "pear")
	got, err := stock.GetMany(ctx, []string{"apple", "pear", "kiwi", "plum"})
	fmt.Println(got["apple"], got["pear"], got["plum"])
	var be *loading.BulkError[string]
	if errors.As(err, &be) {
		for k, err := range be.Errors {
			fmt.Println(k+":", err)
		}
	}
	// Output:
	// db: select [pear]
	// db: select [apple kiwi plum]
	// 3 5 8
	// kiwi: loading: not found
}

// With MaxStale, a value past its TTL is still served, marked with ErrStale,
// while one reload runs in the background; the caller decides whether a
// stale value will do.
func ExampleErrStale() {
	clock := &manualClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	version := 0
	reloaded := make(chan struct{}, 1)
	prices := loading.Must(loading.Options[string, string]{
		Loader: loading.LoaderFunc[string, string](func(ctx context.Context, key string) (string, error) {
			version++
			if version > 1 {
				defer func() { reloaded <- struct{}{} }()
			}
			return fmt.Sprintf("%s v%d", key, version), nil
		}),
		TTL:      time.Minute,
		MaxStale: time.Hour,
		Clock:    clock,
	})
	defer prices.Close()

	ctx := context.Background()
	v, err := prices.Get(ctx, "price")
	fmt.Println(v, err)
	clock.Advance(2 * time.Minute) // past the TTL
	v, err = prices.Get(ctx, "price")
	fmt.Println(v, errors.Is(err, loading.ErrStale))
	<-reloaded
	for {
		// The reload has returned; its value is stored a moment later.
		if v, err = prices.Get(ctx, "price"); err == nil {
			break
		}
	}
	fmt.Println(v, err)
	// Output:
	// price v1 <nil>
	// price v1 true
	// price v2 <nil>
}

// manualClock is a cachekit.Clock that moves only when told to.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
