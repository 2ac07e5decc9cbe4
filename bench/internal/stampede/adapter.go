package stampede

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cachekit/cachekit/loading"
	"github.com/maypok86/otter/v2"
	"github.com/viccon/sturdyc"
	"golang.org/x/sync/singleflight"
)

// LoadFunc is the source behind a cache: the harness's counting loader.
type LoadFunc func(ctx context.Context, key string) (int, error)

// Cache is a read-through cache under test: Get returns the key's value,
// loading it through the LoadFunc the cache was made with when needed.
// A value served stale (cachekit's ErrStale) counts as a value.
type Cache interface {
	Get(ctx context.Context, key string) (int, error)
	Close()
}

// Factory describes one cache and makes fresh instances of it.
type Factory struct {
	Name   string
	Config string // how it is configured, for the report
	// HotAge is how far the clock moves after the warm-up load in the
	// expired-hot-key case: past the refresh age (or past the TTL).
	HotAge time.Duration
	// Hot says what the cache does with the expired hot key, for the report.
	Hot string
	// Refreshes is false for a cache that cannot refresh ahead or serve a
	// stale value: on the expired hot key its callers wait for a reload by
	// design.
	Refreshes bool
	New       func(clock *Clock, load LoadFunc) Cache
}

// The lifetimes every cache is configured with.
const (
	TTL          = time.Minute
	RefreshAfter = 30 * time.Second
	MaxStale     = time.Minute
)

// Factories returns every cache, in report order.
func Factories() []Factory {
	return []Factory{
		{
			Name:      "cachekit",
			Config:    "loading.New: Loader, TTL 1m, RefreshAfter 30s, Clock",
			HotAge:    45 * time.Second,
			Hot:       "45s old: past RefreshAfter, served at once, one background reload",
			Refreshes: true,
			New: func(clock *Clock, load LoadFunc) Cache {
				return newCachekit(clock, load, loading.Options[string, int]{TTL: TTL, RefreshAfter: RefreshAfter})
			},
		},
		{
			Name:      "cachekit-stale",
			Config:    "loading.New: Loader, TTL 1m, MaxStale 1m, Clock",
			HotAge:    90 * time.Second,
			Hot:       "90s old: past TTL within MaxStale, served stale (ErrStale), one background reload",
			Refreshes: true,
			New: func(clock *Clock, load LoadFunc) Cache {
				return newCachekit(clock, load, loading.Options[string, int]{TTL: TTL, MaxStale: MaxStale})
			},
		},
		{
			Name:      "singleflight",
			Config:    "map + sync.RWMutex, x/sync/singleflight.Group, double-checked inside Do, TTL 1m, same clock",
			HotAge:    90 * time.Second,
			Hot:       "90s old: past TTL; no refresh ahead, so every caller waits for one synchronous reload",
			Refreshes: false,
			New: func(clock *Clock, load LoadFunc) Cache {
				return &sfCache{clock: clock, load: load, m: make(map[string]sfEntry)}
			},
		},
		{
			Name:      "otter",
			Config:    "otter.New: MaximumSize 1000, ExpiryWriting 1m, RefreshWriting 30s, Clock; Get(ctx, key, loader)",
			HotAge:    45 * time.Second,
			Hot:       "45s old: past the refresh age, served at once, one background Reload",
			Refreshes: true,
			New:       newOtter,
		},
		{
			Name:      "sturdyc",
			Config:    "sturdyc.New(1000, 1 shard, TTL 1m, 10%): WithEarlyRefreshes(30s, 30s, 1m, 1s), WithClock, WithNoContinuousEvictions; GetOrFetch",
			HotAge:    45 * time.Second,
			Hot:       "45s old: past the early-refresh age, served at once, one background refresh",
			Refreshes: true,
			New:       newSturdyc,
		},
	}
}

// Names returns the names of the caches.
func Names() []string {
	var out []string
	for _, f := range Factories() {
		out = append(out, f.Name)
	}
	return out
}

// Select returns the caches named in a comma-separated list, or all of
// them for "" or "all" (spaces around them aside, as around names).
func Select(list string) ([]Factory, error) {
	all := Factories()
	if l := strings.TrimSpace(list); l == "" || l == "all" {
		return all, nil
	}
	var out []Factory
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(f Factory) bool { return f.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown cache %q (known: %s)", name, strings.Join(Names(), ", "))
		}
		if slices.ContainsFunc(out, func(f Factory) bool { return f.Name == name }) {
			return nil, fmt.Errorf("cache %q named twice", name)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// cachekit

type cachekitCache struct{ c *loading.Cache[string, int] }

func newCachekit(clock *Clock, load LoadFunc, opts loading.Options[string, int]) Cache {
	opts.Loader = loading.LoaderFunc[string, int](load)
	opts.Clock = clock
	return cachekitCache{loading.Must(opts)}
}

func (a cachekitCache) Get(ctx context.Context, key string) (int, error) {
	v, err := a.c.Get(ctx, key)
	if errors.Is(err, loading.ErrStale) {
		err = nil // a stale value is what the caller asked for here
	}
	return v, err
}

// Close waits for a background reload in flight.
func (a cachekitCache) Close() { a.c.Close() }

// singleflight over a map guarded by an RWMutex

type sfEntry struct {
	value   int
	expires int64 // clock nanoseconds
}

type sfCache struct {
	clock *Clock
	load  LoadFunc
	g     singleflight.Group
	mu    sync.RWMutex
	m     map[string]sfEntry
}

func (c *sfCache) lookup(key string) (int, bool) {
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if ok && c.clock.NowNano() < e.expires {
		return e.value, true
	}
	return 0, false
}

func (c *sfCache) Get(ctx context.Context, key string) (int, error) {
	if v, ok := c.lookup(key); ok {
		return v, nil
	}
	v, err, _ := c.g.Do(key, func() (any, error) {
		// Double check: a flight that ended between the lookup above and
		// Do has stored the value.
		if v, ok := c.lookup(key); ok {
			return v, nil
		}
		v, err := c.load(ctx, key)
		if err != nil {
			return 0, err
		}
		c.mu.Lock()
		c.m[key] = sfEntry{value: v, expires: c.clock.NowNano() + int64(TTL)}
		c.mu.Unlock()
		return v, nil
	})
	return v.(int), err
}

func (c *sfCache) Close() {}

// otter v2

type otterCache struct {
	c      *otter.Cache[string, int]
	loader otter.Loader[string, int]
}

func newOtter(clock *Clock, load LoadFunc) Cache {
	return &otterCache{
		c: otter.Must(&otter.Options[string, int]{
			MaximumSize:       1000,
			ExpiryCalculator:  otter.ExpiryWriting[string, int](TTL),
			RefreshCalculator: otter.RefreshWriting[string, int](RefreshAfter),
			Clock:             clock,
		}),
		loader: otter.LoaderFunc[string, int](load),
	}
}

func (a *otterCache) Get(ctx context.Context, key string) (int, error) {
	return a.c.Get(ctx, key, a.loader)
}

// Close stops otter's goroutines; it does not wait for a refresh in
// flight (the harness waits for the loader itself).
func (a *otterCache) Close() { a.c.StopAllGoroutines() }

// sturdyc

type sturdycCache struct {
	c    *sturdyc.Client[int]
	load LoadFunc
}

func newSturdyc(clock *Clock, load LoadFunc) Cache {
	return &sturdycCache{
		c: sturdyc.New[int](1000, 1, TTL, 10,
			// Background refresh once a requested key is 30s old; a
			// synchronous one only from 1m, when it has expired anyway.
			sturdyc.WithEarlyRefreshes(RefreshAfter, RefreshAfter, TTL, time.Second),
			sturdyc.WithClock(clock),
			sturdyc.WithNoContinuousEvictions(),
		),
		load: load,
	}
}

func (a *sturdycCache) Get(ctx context.Context, key string) (int, error) {
	return a.c.GetOrFetch(ctx, key, func(ctx context.Context) (int, error) { return a.load(ctx, key) })
}

// Close does nothing: sturdyc has no Close, and with
// WithNoContinuousEvictions it runs no goroutine of its own.
func (a *sturdycCache) Close() {}
