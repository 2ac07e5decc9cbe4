// Package adapter puts cachekit and its peers behind one small interface,
// so that every benchmark drives every cache through the same code.
//
// Keys and values are uint64. Every cache is called through the Cache
// interface, so each pays the same indirect call per operation. Each
// adapter is configured as its authors recommend for a cache of entries
// that all weigh 1; Info.Config says how, and docs/benchmarks/README.md
// why.
package adapter

import (
	"fmt"
	"slices"
	"strings"
)

// Cache is a concurrent cache of uint64 keys and values. All methods must
// be safe for concurrent use.
type Cache interface {
	// Name is the adapter's name in the registry ("cachekit", "otter", ...).
	Name() string
	// Get returns the value stored for key and reports whether it was found.
	Get(key uint64) (uint64, bool)
	// Set stores value for key. A bounded cache may drop or evict the
	// entry at any time, even before a following Get.
	Set(key, value uint64)
	// Close releases the cache's goroutines, if any. The cache is not used
	// afterwards.
	Close()
}

// Syncer is implemented by caches that apply writes asynchronously and can
// wait until the writes made so far are applied (ristretto, theine) or run
// their pending maintenance at once (otter). Benchmarks call it after
// pre-filling a cache, before timing; tests call it before checking what a
// cache holds.
type Syncer interface {
	Sync()
}

// Lener is implemented by caches that can count their entries.
type Lener interface {
	Len() int
}

// Info describes an adapter.
type Info struct {
	// Name is the registry name, used in flags and benchmark names.
	Name string
	// Bounded reports whether the cache evicts to respect its capacity.
	// Unbounded caches ignore the capacity passed to New and grow with
	// the key space.
	Bounded bool
	// Throughput reports whether the cache is in the default set of the
	// throughput command and benchmarks (2Q and ARC are there for hit
	// ratios; their throughput is that of golang-lru's mutex-guarded LRU).
	Throughput bool
	// Config says how the cache is built, for the reports.
	Config string
	// New builds the cache for capacity entries.
	New func(capacity int) Cache
}

var registry []Info

func register(info Info) {
	if _, ok := Lookup(info.Name); ok {
		panic("adapter: duplicate name " + info.Name)
	}
	registry = append(registry, info)
}

// All returns every adapter, in the order of the reports: cachekit first,
// then the bounded peers, then the unbounded ones.
func All() []Info {
	return slices.Clone(registry)
}

// Throughput returns the adapters that the throughput benchmarks run by
// default.
func Throughput() []Info {
	var out []Info
	for _, info := range registry {
		if info.Throughput {
			out = append(out, info)
		}
	}
	return out
}

// Lookup returns the adapter named name.
func Lookup(name string) (Info, bool) {
	for _, info := range registry {
		if info.Name == name {
			return info, true
		}
	}
	return Info{}, false
}

// Select returns the adapters named in a comma-separated list, in the
// list's order; "" selects Throughput() and "all" selects All().
func Select(list string) ([]Info, error) {
	switch strings.TrimSpace(list) {
	case "":
		return Throughput(), nil
	case "all":
		return All(), nil
	}
	var out []Info
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		info, ok := Lookup(name)
		if !ok {
			return nil, fmt.Errorf("unknown cache %q (known: %s)", name, strings.Join(Names(), ", "))
		}
		if slices.ContainsFunc(out, func(i Info) bool { return i.Name == name }) {
			return nil, fmt.Errorf("cache %q named twice", name)
		}
		out = append(out, info)
	}
	return out, nil
}

// Names returns the names of all adapters.
func Names() []string {
	names := make([]string, len(registry))
	for i, info := range registry {
		names[i] = info.Name
	}
	return names
}

// The registry, in report order. Registering here rather than in each
// file's init keeps the order explicit.
func init() {
	register(cachekitInfo)
	register(otterInfo)
	register(theineInfo)
	register(ristrettoInfo)
	register(lruInfo)
	register(twoQInfo)
	register(arcInfo)
	register(goCacheInfo)
	register(syncMapInfo)
	register(xsyncInfo)
	register(rwMutexMapInfo)
	register(shardedMapInfo)
}
