package adapter

import (
	"sync"

	"github.com/puzpuzpuz/xsync/v4"
)

// The unbounded baselines: concurrent maps that never evict. In the
// evicting workloads they grow to the whole key space; their rows tell how
// close to a plain concurrent map a bounded cache gets, not how a cache
// would do.

var syncMapInfo = Info{
	Name:       "sync.Map",
	Throughput: true,
	Config:     "the standard library's `sync.Map` (Load, Store): unbounded. Values are boxed in interfaces, so a Store of a new value allocates.",
	New:        func(int) Cache { return &syncMap{} },
}

type syncMap struct {
	m sync.Map
}

func (a *syncMap) Name() string { return "sync.Map" }

func (a *syncMap) Get(key uint64) (uint64, bool) {
	v, ok := a.m.Load(key)
	if !ok {
		return 0, false
	}
	return v.(uint64), true
}

func (a *syncMap) Set(key, value uint64) { a.m.Store(key, value) }
func (a *syncMap) Close()                {}

func (a *syncMap) Len() int {
	n := 0
	a.m.Range(func(any, any) bool { n++; return true })
	return n
}

var xsyncInfo = Info{
	Name:       "xsync",
	Throughput: true,
	Config:     "puzpuzpuz/xsync v4 `NewMap[uint64, uint64]()` (Load, Store): unbounded, the fastest typed concurrent map; the ceiling for a cache's hit path.",
	New:        func(int) Cache { return &xsyncMap{m: xsync.NewMap[uint64, uint64]()} },
}

type xsyncMap struct {
	m *xsync.Map[uint64, uint64]
}

func (a *xsyncMap) Name() string                  { return "xsync" }
func (a *xsyncMap) Get(key uint64) (uint64, bool) { return a.m.Load(key) }
func (a *xsyncMap) Set(key, value uint64)         { a.m.Store(key, value) }
func (a *xsyncMap) Close()                        {}
func (a *xsyncMap) Len() int                      { return a.m.Size() }

var rwMutexMapInfo = Info{
	Name:       "rwmutex-map",
	Throughput: true,
	Config:     "a `map[uint64]uint64` behind one `sync.RWMutex`: unbounded.",
	New:        func(int) Cache { return &rwMutexMap{m: make(map[uint64]uint64)} },
}

type rwMutexMap struct {
	mu sync.RWMutex
	m  map[uint64]uint64
}

func (a *rwMutexMap) Name() string { return "rwmutex-map" }

func (a *rwMutexMap) Get(key uint64) (uint64, bool) {
	a.mu.RLock()
	v, ok := a.m[key]
	a.mu.RUnlock()
	return v, ok
}

func (a *rwMutexMap) Set(key, value uint64) {
	a.mu.Lock()
	a.m[key] = value
	a.mu.Unlock()
}

func (a *rwMutexMap) Close() {}

func (a *rwMutexMap) Len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.m)
}

// shards is the number of shards of shardedMap.
const shards = 64

var shardedMapInfo = Info{
	Name:       "sharded-map",
	Throughput: true,
	Config:     "64 shards, each a `map[uint64]uint64` behind a `sync.RWMutex` padded to its own cache lines, chosen by the top bits of a multiplicative hash of the key: unbounded.",
	New: func(int) Cache {
		s := &shardedMap{}
		for i := range s.shards {
			s.shards[i].m = make(map[uint64]uint64)
		}
		return s
	},
}

type shardedMap struct {
	shards [shards]shard
}

type shard struct {
	mu sync.RWMutex
	m  map[uint64]uint64
	_  [128 - 32]byte // keep neighbouring shards' locks off this shard's cache lines
}

func (a *shardedMap) shard(key uint64) *shard {
	// Fibonacci hashing: the top 6 bits of key × 2⁶⁴/φ.
	return &a.shards[(key*0x9e3779b97f4a7c15)>>58]
}

func (a *shardedMap) Name() string { return "sharded-map" }

func (a *shardedMap) Get(key uint64) (uint64, bool) {
	s := a.shard(key)
	s.mu.RLock()
	v, ok := s.m[key]
	s.mu.RUnlock()
	return v, ok
}

func (a *shardedMap) Set(key, value uint64) {
	s := a.shard(key)
	s.mu.Lock()
	s.m[key] = value
	s.mu.Unlock()
}

func (a *shardedMap) Close() {}

func (a *shardedMap) Len() int {
	n := 0
	for i := range a.shards {
		s := &a.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
