package adapter

import (
	"fmt"

	"github.com/cachekit/cachekit/bytecache"
)

// bytecacheInfo is cachekit's byte cache, used through its Typed layer
// with the scenario's codec.
var bytecacheInfo = StringInfo{Name: "bytecache", Kind: KindBytes, TTL: true,
	Config: "cachekit `bytecache.New(Options{MaxBytes: budget, DefaultTTL: ttl})` (budget: see the byte caches' sizing; default shard count) " +
		"behind `bytecache.NewTyped[string, V](cache, codec)`, the scenario's codec."}

func init() {
	stringRegistry = append(stringRegistry, bytecacheInfo)
}

// bytecacheMinBytes is the smallest budget bytecache accepts: one shard
// of its smallest ring, 1 KiB. A smaller budget (a few entries) is raised
// to it, as freecache and fastcache raise theirs, instead of failing the
// run.
const bytecacheMinBytes = 1 << 10

func newBytecache[V any](cfg StringConfig[V]) (StringCache[V], error) {
	budget := max(ByteBudget(cfg.Capacity, cfg.EntryBytes), bytecacheMinBytes)
	c, err := bytecache.New(bytecache.Options{MaxBytes: int64(budget), DefaultTTL: cfg.TTL})
	if err != nil {
		return nil, err
	}
	return &bytecacheString[V]{t: bytecache.NewTyped[string, V](c, cfg.Codec)}, nil
}

type bytecacheString[V any] struct {
	t *bytecache.Typed[string, V]
}

func (a *bytecacheString[V]) Name() string           { return "bytecache" }
func (a *bytecacheString[V]) Get(k string) (V, bool) { return a.t.Get(k) }
func (a *bytecacheString[V]) Set(k string, v V) {
	if err := a.t.Set(k, v, 0); err != nil {
		panic(fmt.Sprintf("bytecache: Set: %v", err))
	}
}
func (a *bytecacheString[V]) Close()   { a.t.Cache().Close() }
func (a *bytecacheString[V]) Len() int { return a.t.Cache().Len() }
