package adapter

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// StringCache is a concurrent cache of string keys and values of type V:
// the adapters of the scenarios that store realistic entries (the
// articles' table, memory per entry, GC impact). All methods must be safe
// for concurrent use, except those of the caches whose StringInfo says
// otherwise.
//
// The byte caches (bigcache, freecache, fastcache, cachekit's bytecache)
// store encoded values: their adapters encode on Set and decode on Get
// with StringConfig.Codec, as a user of a byte cache must.
type StringCache[V any] interface {
	Name() string
	// Get returns the value stored for key and reports whether it was
	// found.
	Get(key string) (V, bool)
	// Set stores value for key. A bounded cache may drop or evict the
	// entry at any time.
	Set(key string, value V)
	// Close releases the cache's goroutines and memory, if any.
	Close()
}

// Codec is the binary encoding in which the byte caches store values.
// The methods must be safe for concurrent use. Decode must not keep b.
type Codec[V any] interface {
	Append(dst []byte, v V) ([]byte, error)
	Decode(b []byte) (V, error)
}

// StringConfig configures a StringCache.
type StringConfig[V any] struct {
	// Capacity is the number of entries the cache must hold: bounded
	// caches are bounded by it, byte caches but bigcache get a byte
	// budget for it (bigcache is presized for it and has no byte bound),
	// unbounded maps may presize for it where their constructor offers
	// that (none of them is given a hint, like the bounded caches).
	Capacity int
	// TTL is every entry's time to live; 0 means none. Caches without
	// per-entry expiry (StringInfo.TTL false) ignore it.
	TTL time.Duration
	// Codec encodes values for the byte caches, which require it.
	Codec Codec[V]
	// EntryBytes is the size of a typical key plus its encoded value,
	// from which the byte caches' budgets are computed (see ByteBudget).
	// Required by the byte caches.
	EntryBytes int
}

// StringKind says what sort of store a StringCache is.
type StringKind string

// The kinds of StringCache.
const (
	KindCache StringKind = "cache" // a bounded cache of Go values
	KindMap   StringKind = "map"   // an unbounded map: never evicts
	KindBytes StringKind = "bytes" // a byte cache: values encoded into large buffers
)

// StringInfo describes a StringCache adapter.
type StringInfo struct {
	Name string
	Kind StringKind
	// TTL reports whether the cache supports a time to live per entry
	// (or, for bigcache, one for all entries).
	TTL bool
	// Serial reports that the cache is not safe for concurrent use (the
	// plain map): only single-goroutine scenarios use it.
	Serial bool
	// Config says how the cache is built, for the reports.
	Config string
}

// stringRegistry lists the StringCache adapters in report order. Each
// name's constructor is in newString.
var stringRegistry = []StringInfo{
	{Name: "cachekit", Kind: KindCache, TTL: true,
		Config: "`cachekit.New(Options{MaxEntries: capacity, DefaultTTL: ttl, DisableStats: true})`: the defaults otherwise."},
	{Name: "otter", Kind: KindCache, TTL: true,
		Config: "otter v2 `Options{MaximumSize: capacity}` (with `ExpiryCalculator: ExpiryWriting(ttl)` when a TTL is set)."},
	{Name: "theine", Kind: KindCache, TTL: true,
		Config: "theine `NewBuilder(capacity).Build()`, cost 1 per entry (`SetWithTTL` when a TTL is set)."},
	{Name: "ristretto", Kind: KindCache, TTL: true,
		Config: "ristretto v2 `NumCounters: 10×capacity, MaxCost: capacity, BufferItems: 64, IgnoreInternalCost: true`, cost 1 (`SetWithTTL` when a TTL is set); Sets are asynchronous and may be dropped."},
	{Name: "lru", Kind: KindCache,
		Config: "golang-lru v2 `New(capacity)`: a list and a map behind one mutex; no TTL."},
	{Name: "go-cache", Kind: KindMap, TTL: true,
		Config: "patrickmn/go-cache `New(ttl or NoExpiration, 0)`: no janitor, no size bound; values boxed in interfaces."},
	{Name: "sync.Map", Kind: KindMap,
		Config: "the standard library's `sync.Map`: unbounded, values boxed in interfaces."},
	{Name: "xsync", Kind: KindMap,
		Config: "puzpuzpuz/xsync v4 `NewMap[string, V]()`: unbounded."},
	{Name: "mutex-map", Kind: KindMap,
		Config: "a `map[string]V` behind one `sync.Mutex`: unbounded."},
	{Name: "rwmutex-map", Kind: KindMap,
		Config: "a `map[string]V` behind one `sync.RWMutex`: unbounded."},
	{Name: "sharded-map", Kind: KindMap,
		Config: "64 × (`map[string]V` + `sync.RWMutex`, padded), shard chosen by `hash/maphash` of the key: unbounded."},
	{Name: "map", Kind: KindMap, Serial: true,
		Config: "a plain `map[string]V`, no lock: only where one goroutine uses it (the GC and memory baselines)."},
	{Name: "bigcache", Kind: KindBytes, TTL: true,
		Config: "bigcache v3 `Config{Shards: 1024, LifeWindow: ttl (24 h without one), CleanWindow: 0, MaxEntriesInWindow: capacity, MaxEntrySize: entry bytes, HardMaxCacheSize: 0}`: its default shard count, presized for the entries as its documentation advises; values encoded with the scenario's codec; with a TTL, read with `GetWithInfo` (an entry past LifeWindow is a miss)."},
	{Name: "freecache", Kind: KindBytes, TTL: true,
		Config: "freecache `NewCache(budget)` (budget: see the byte caches' sizing), `Set` with the TTL in seconds, rounded up plus one (freecache counts from the current second cut down: no entry expires early); values encoded with the scenario's codec, read with `GetWithBuf` into a pooled buffer."},
	{Name: "fastcache", Kind: KindBytes,
		Config: "fastcache `New(budget)` (budget: see the byte caches' sizing; at least its 32 MiB minimum); no TTL; values encoded with the scenario's codec, read with `HasGet` into a pooled buffer."},
}

// StringCaches returns every StringCache adapter, in report order.
func StringCaches() []StringInfo {
	return slices.Clone(stringRegistry)
}

// LookupString returns the StringCache adapter named name.
func LookupString(name string) (StringInfo, bool) {
	i := slices.IndexFunc(stringRegistry, func(s StringInfo) bool { return s.Name == name })
	if i < 0 {
		return StringInfo{}, false
	}
	return stringRegistry[i], true
}

// SelectStrings returns the StringCache adapters named in a
// comma-separated list, in the list's order, or def if the list is empty.
func SelectStrings(list string, def []string) ([]StringInfo, error) {
	var names []string
	if strings.TrimSpace(list) == "" {
		names = def
	} else {
		for n := range strings.SplitSeq(list, ",") {
			names = append(names, strings.TrimSpace(n))
		}
	}
	var out []StringInfo
	for _, n := range names {
		info, ok := LookupString(n)
		if !ok {
			var known []string
			for _, s := range stringRegistry {
				known = append(known, s.Name)
			}
			return nil, fmt.Errorf("unknown cache %q (known: %s)", n, strings.Join(known, ", "))
		}
		if slices.ContainsFunc(out, func(s StringInfo) bool { return s.Name == n }) {
			return nil, fmt.Errorf("cache %q named twice", n)
		}
		out = append(out, info)
	}
	return out, nil
}

// NewString builds the StringCache adapter named name.
func NewString[V any](name string, cfg StringConfig[V]) (StringCache[V], error) {
	info, ok := LookupString(name)
	if !ok {
		return nil, fmt.Errorf("adapter: unknown cache %q", name)
	}
	if cfg.Capacity < 1 {
		return nil, fmt.Errorf("adapter: %s: capacity %d is not positive", name, cfg.Capacity)
	}
	if cfg.TTL < 0 {
		return nil, fmt.Errorf("adapter: %s: negative TTL %v", name, cfg.TTL)
	}
	if info.Kind == KindBytes && (cfg.Codec == nil || cfg.EntryBytes < 1) {
		return nil, fmt.Errorf("adapter: %s is a byte cache: it needs a codec and the entries' size", name)
	}
	return newString(name, cfg)
}

// ByteBudget is the byte budget the byte caches get for cfg: room for
// every entry with a slack of a half (for their per-entry headers and the
// uneven filling of their shards), so that a cache built for Capacity
// entries holds them all. The figure is the same for freecache, fastcache
// and bytecache (freecache, fastcache and bytecache raise it to their
// minimums, 512 KiB, 32 MiB and 1 KiB); what each makes of it is its own
// design. bigcache gets none: it is built with HardMaxCacheSize 0 and
// grows as it fills.
func ByteBudget(capacity, entryBytes int) int {
	return capacity * (entryBytes + 32) * 3 / 2
}

// Settle waits until c, if it applies writes asynchronously (Syncer), has
// applied those made so far.
func Settle(c any) {
	if s, ok := c.(Syncer); ok {
		s.Sync()
	}
}

// Len returns c's number of entries, and false if it cannot count them.
func Len(c any) (int, bool) {
	if l, ok := c.(Lener); ok {
		return l.Len(), true
	}
	return 0, false
}
