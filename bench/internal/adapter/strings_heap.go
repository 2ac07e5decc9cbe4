package adapter

import (
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	theine "github.com/Yiling-J/theine-go"
	"github.com/cachekit/cachekit"
	"github.com/dgraph-io/ristretto/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"
	gocache "github.com/patrickmn/go-cache"
	"github.com/puzpuzpuz/xsync/v4"
)

// newString builds the adapter named name; NewString has checked cfg.
func newString[V any](name string, cfg StringConfig[V]) (StringCache[V], error) {
	switch name {
	case "cachekit":
		c, err := cachekit.New(cachekit.Options[string, V]{MaxEntries: cfg.Capacity, DefaultTTL: cfg.TTL, DisableStats: true})
		if err != nil {
			return nil, err
		}
		return &ckString[V]{c}, nil
	case "otter":
		o := &otter.Options[string, V]{MaximumSize: cfg.Capacity}
		if cfg.TTL > 0 {
			o.ExpiryCalculator = otter.ExpiryWriting[string, V](cfg.TTL)
		}
		c, err := otter.New(o)
		if err != nil {
			return nil, err
		}
		return &otterString[V]{c}, nil
	case "theine":
		c, err := theine.NewBuilder[string, V](int64(cfg.Capacity)).Build()
		if err != nil {
			return nil, err
		}
		return &theineString[V]{c: c, ttl: cfg.TTL}, nil
	case "ristretto":
		c, err := ristretto.NewCache(&ristretto.Config[string, V]{
			NumCounters:        10 * int64(cfg.Capacity),
			MaxCost:            int64(cfg.Capacity),
			BufferItems:        64,
			IgnoreInternalCost: true,
		})
		if err != nil {
			return nil, err
		}
		return &ristrettoString[V]{c: c, ttl: cfg.TTL}, nil
	case "lru":
		c, err := lru.New[string, V](cfg.Capacity)
		if err != nil {
			return nil, err
		}
		return &lruString[V]{c}, nil
	case "go-cache":
		ttl := cfg.TTL
		if ttl == 0 {
			ttl = gocache.NoExpiration
		}
		return &goCacheString[V]{c: gocache.New(ttl, 0)}, nil
	case "sync.Map":
		return &syncMapString[V]{}, nil
	case "xsync":
		return &xsyncString[V]{xsync.NewMap[string, V]()}, nil
	case "mutex-map":
		return &mutexMapString[V]{m: make(map[string]V)}, nil
	case "rwmutex-map":
		return &rwMapString[V]{m: make(map[string]V)}, nil
	case "sharded-map":
		s := &shardedString[V]{seed: maphash.MakeSeed()}
		for i := range s.shards {
			s.shards[i].m = make(map[string]V)
		}
		return s, nil
	case "map":
		return &plainMap[V]{m: make(map[string]V)}, nil
	}
	return newByteString(name, cfg)
}

type ckString[V any] struct{ c *cachekit.Cache[string, V] }

func (a *ckString[V]) Name() string           { return "cachekit" }
func (a *ckString[V]) Get(k string) (V, bool) { return a.c.Get(k) }
func (a *ckString[V]) Set(k string, v V)      { a.c.Set(k, v) }
func (a *ckString[V]) Close()                 { a.c.Close() }
func (a *ckString[V]) Len() int               { return a.c.Len() }

type otterString[V any] struct{ c *otter.Cache[string, V] }

func (a *otterString[V]) Name() string           { return "otter" }
func (a *otterString[V]) Get(k string) (V, bool) { return a.c.GetIfPresent(k) }
func (a *otterString[V]) Set(k string, v V)      { a.c.Set(k, v) }
func (a *otterString[V]) Close()                 { a.c.StopAllGoroutines() }
func (a *otterString[V]) Sync()                  { a.c.CleanUp() }
func (a *otterString[V]) Len() int               { return a.c.EstimatedSize() }

type theineString[V any] struct {
	c   *theine.Cache[string, V]
	ttl time.Duration
}

func (a *theineString[V]) Name() string           { return "theine" }
func (a *theineString[V]) Get(k string) (V, bool) { return a.c.Get(k) }
func (a *theineString[V]) Set(k string, v V) {
	if a.ttl > 0 {
		a.c.SetWithTTL(k, v, 1, a.ttl)
		return
	}
	a.c.Set(k, v, 1)
}
func (a *theineString[V]) Close()   { a.c.Close() }
func (a *theineString[V]) Sync()    { a.c.Wait() }
func (a *theineString[V]) Len() int { return a.c.Len() }

type ristrettoString[V any] struct {
	c   *ristretto.Cache[string, V]
	ttl time.Duration
}

func (a *ristrettoString[V]) Name() string           { return "ristretto" }
func (a *ristrettoString[V]) Get(k string) (V, bool) { return a.c.Get(k) }
func (a *ristrettoString[V]) Set(k string, v V) {
	if a.ttl > 0 {
		a.c.SetWithTTL(k, v, 1, a.ttl)
		return
	}
	a.c.Set(k, v, 1)
}
func (a *ristrettoString[V]) Close() { a.c.Close() }
func (a *ristrettoString[V]) Sync()  { a.c.Wait() }
func (a *ristrettoString[V]) Len() int {
	n := 0
	a.c.IterValues(func(V) bool { n++; return false })
	return n
}

type lruString[V any] struct{ c *lru.Cache[string, V] }

func (a *lruString[V]) Name() string           { return "lru" }
func (a *lruString[V]) Get(k string) (V, bool) { return a.c.Get(k) }
func (a *lruString[V]) Set(k string, v V)      { a.c.Add(k, v) }
func (a *lruString[V]) Close()                 {}
func (a *lruString[V]) Len() int               { return a.c.Len() }

type goCacheString[V any] struct{ c *gocache.Cache }

func (a *goCacheString[V]) Name() string { return "go-cache" }
func (a *goCacheString[V]) Get(k string) (V, bool) {
	v, ok := a.c.Get(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}
func (a *goCacheString[V]) Set(k string, v V) { a.c.SetDefault(k, v) }
func (a *goCacheString[V]) Close()            {}
func (a *goCacheString[V]) Len() int          { return a.c.ItemCount() }

type syncMapString[V any] struct{ m sync.Map }

func (a *syncMapString[V]) Name() string { return "sync.Map" }
func (a *syncMapString[V]) Get(k string) (V, bool) {
	v, ok := a.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}
func (a *syncMapString[V]) Set(k string, v V) { a.m.Store(k, v) }
func (a *syncMapString[V]) Close()            {}
func (a *syncMapString[V]) Len() int {
	n := 0
	a.m.Range(func(any, any) bool { n++; return true })
	return n
}

type xsyncString[V any] struct{ m *xsync.Map[string, V] }

func (a *xsyncString[V]) Name() string           { return "xsync" }
func (a *xsyncString[V]) Get(k string) (V, bool) { return a.m.Load(k) }
func (a *xsyncString[V]) Set(k string, v V)      { a.m.Store(k, v) }
func (a *xsyncString[V]) Close()                 {}
func (a *xsyncString[V]) Len() int               { return a.m.Size() }

type mutexMapString[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

func (a *mutexMapString[V]) Name() string { return "mutex-map" }
func (a *mutexMapString[V]) Get(k string) (V, bool) {
	a.mu.Lock()
	v, ok := a.m[k]
	a.mu.Unlock()
	return v, ok
}
func (a *mutexMapString[V]) Set(k string, v V) {
	a.mu.Lock()
	a.m[k] = v
	a.mu.Unlock()
}
func (a *mutexMapString[V]) Close() {}
func (a *mutexMapString[V]) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.m)
}

type rwMapString[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

func (a *rwMapString[V]) Name() string { return "rwmutex-map" }
func (a *rwMapString[V]) Get(k string) (V, bool) {
	a.mu.RLock()
	v, ok := a.m[k]
	a.mu.RUnlock()
	return v, ok
}
func (a *rwMapString[V]) Set(k string, v V) {
	a.mu.Lock()
	a.m[k] = v
	a.mu.Unlock()
}
func (a *rwMapString[V]) Close() {}
func (a *rwMapString[V]) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.m)
}

type shardedString[V any] struct {
	seed   maphash.Seed
	shards [shards]stringShard[V]
}

type stringShard[V any] struct {
	mu sync.RWMutex
	m  map[string]V
	_  [128 - 32]byte // keep neighbouring shards' locks off this shard's cache lines
}

func (a *shardedString[V]) shard(k string) *stringShard[V] {
	return &a.shards[maphash.String(a.seed, k)>>58]
}

func (a *shardedString[V]) Name() string { return "sharded-map" }
func (a *shardedString[V]) Get(k string) (V, bool) {
	s := a.shard(k)
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	return v, ok
}
func (a *shardedString[V]) Set(k string, v V) {
	s := a.shard(k)
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
}
func (a *shardedString[V]) Close() {}
func (a *shardedString[V]) Len() int {
	n := 0
	for i := range a.shards {
		s := &a.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}

// plainMap is not safe for concurrent use (StringInfo.Serial).
type plainMap[V any] struct{ m map[string]V }

func (a *plainMap[V]) Name() string { return "map" }
func (a *plainMap[V]) Get(k string) (V, bool) {
	v, ok := a.m[k]
	return v, ok
}
func (a *plainMap[V]) Set(k string, v V) { a.m[k] = v }
func (a *plainMap[V]) Close()            {}
func (a *plainMap[V]) Len() int          { return len(a.m) }

var errUnknown = fmt.Errorf("adapter: unknown cache")
