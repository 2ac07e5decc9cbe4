package adapter

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/VictoriaMetrics/fastcache"
	"github.com/allegro/bigcache/v3"
	"github.com/coocood/freecache"
)

// newByteString builds the byte cache named name.
func newByteString[V any](name string, cfg StringConfig[V]) (StringCache[V], error) {
	budget := ByteBudget(cfg.Capacity, cfg.EntryBytes)
	switch name {
	case "bigcache":
		life := cfg.TTL
		if life == 0 {
			life = 24 * time.Hour
		}
		c, err := bigcache.New(context.Background(), bigcache.Config{
			Shards:             1024,
			LifeWindow:         life,
			CleanWindow:        0,
			MaxEntriesInWindow: cfg.Capacity,
			MaxEntrySize:       cfg.EntryBytes,
			HardMaxCacheSize:   0,
		})
		if err != nil {
			return nil, err
		}
		return &bigcacheString[V]{c: c, codec: cfg.Codec, ttl: cfg.TTL > 0}, nil
	case "freecache":
		// freecache counts whole seconds from the current second cut
		// down (an entry set at x.9 s for 2 s expires at x+2.0, 1.1 s
		// later): round up and add a second, so that no entry expires
		// before its TTL (1.9 s is 3 s); one may outlive it by under 2 s.
		ttl := 0
		if cfg.TTL > 0 {
			ttl = int(cfg.TTL/time.Second) + 1
			if cfg.TTL%time.Second != 0 {
				ttl++
			}
		}
		return &freecacheString[V]{c: freecache.NewCache(budget), codec: cfg.Codec, ttl: ttl}, nil
	case "fastcache":
		return &fastcacheString[V]{c: fastcache.New(budget), codec: cfg.Codec}, nil
	case "bytecache":
		return newBytecache(cfg)
	}
	return nil, fmt.Errorf("%w %q", errUnknown, name)
}

// keyBytes returns the bytes of s without copying them. The byte caches
// copy keys and never modify them, so they may read s's memory.
func keyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// bufs recycles the buffers values are encoded into and decoded from.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

func encode[V any](codec Codec[V], v V, f func(b []byte)) {
	bp := bufs.Get().(*[]byte)
	b, err := codec.Append((*bp)[:0], v)
	if err != nil {
		panic(fmt.Sprintf("adapter: encoding a value: %v", err))
	}
	f(b)
	*bp = b
	bufs.Put(bp)
}

func decode[V any](codec Codec[V], b []byte) V {
	v, err := codec.Decode(b)
	if err != nil {
		panic(fmt.Sprintf("adapter: decoding a value: %v", err))
	}
	return v
}

type bigcacheString[V any] struct {
	c     *bigcache.BigCache
	codec Codec[V]
	ttl   bool // entries expire (StringConfig.TTL)
}

func (a *bigcacheString[V]) Name() string { return "bigcache" }
func (a *bigcacheString[V]) Get(k string) (V, bool) {
	// bigcache copies the entry into a new slice. Get does not look at
	// the entry's age (only the cleaner, off here, removes old entries):
	// with a TTL, GetWithInfo says whether it outlived LifeWindow (it
	// reads the clock, which a Get without a TTL does not pay).
	var b []byte
	var err error
	if a.ttl {
		var info bigcache.Response
		b, info, err = a.c.GetWithInfo(k)
		if err == nil && info.EntryStatus == bigcache.Expired {
			err = bigcache.ErrEntryNotFound
		}
	} else {
		b, err = a.c.Get(k)
	}
	if err != nil {
		var zero V
		return zero, false
	}
	return decode(a.codec, b), true
}
func (a *bigcacheString[V]) Set(k string, v V) {
	encode(a.codec, v, func(b []byte) {
		if err := a.c.Set(k, b); err != nil {
			panic(fmt.Sprintf("bigcache: Set: %v", err))
		}
	})
}
func (a *bigcacheString[V]) Close()   { a.c.Close() }
func (a *bigcacheString[V]) Len() int { return a.c.Len() }

type freecacheString[V any] struct {
	c     *freecache.Cache
	codec Codec[V]
	ttl   int // seconds; 0: none
}

func (a *freecacheString[V]) Name() string { return "freecache" }
func (a *freecacheString[V]) Get(k string) (V, bool) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b, err := a.c.GetWithBuf(keyBytes(k), (*bp)[:cap(*bp)])
	if err != nil {
		var zero V
		return zero, false
	}
	if cap(b) > cap(*bp) {
		*bp = b[:0]
	}
	return decode(a.codec, b), true
}
func (a *freecacheString[V]) Set(k string, v V) {
	encode(a.codec, v, func(b []byte) {
		// An entry larger than 1/1024 of the cache is refused; the
		// scenarios' entries are far smaller, so an error is a bug.
		if err := a.c.Set(keyBytes(k), b, a.ttl); err != nil {
			panic(fmt.Sprintf("freecache: Set: %v", err))
		}
	})
}
func (a *freecacheString[V]) Close()   {}
func (a *freecacheString[V]) Len() int { return int(a.c.EntryCount()) }

type fastcacheString[V any] struct {
	c     *fastcache.Cache
	codec Codec[V]
}

func (a *fastcacheString[V]) Name() string { return "fastcache" }
func (a *fastcacheString[V]) Get(k string) (V, bool) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b, ok := a.c.HasGet((*bp)[:0], keyBytes(k))
	*bp = b[:0]
	if !ok {
		var zero V
		return zero, false
	}
	return decode(a.codec, b), true
}
func (a *fastcacheString[V]) Set(k string, v V) {
	encode(a.codec, v, func(b []byte) { a.c.Set(keyBytes(k), b) })
}
func (a *fastcacheString[V]) Close() { a.c.Reset() }
func (a *fastcacheString[V]) Len() int {
	var s fastcache.Stats
	a.c.UpdateStats(&s)
	return int(s.EntriesCount)
}
