package bytecache

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Errors returned by Set and the snapshot methods.
var (
	// ErrKeyTooLarge is returned by Set for a key longer than
	// Options.MaxKeyBytes.
	ErrKeyTooLarge = errors.New("bytecache: key too large")
	// ErrValueTooLarge is returned by Set for a value longer than
	// Options.MaxValueBytes, or one that with its key does not fit in a
	// shard.
	ErrValueTooLarge = errors.New("bytecache: value too large")
	// ErrClosed is returned by Set and the snapshot methods after Close.
	ErrClosed = errors.New("bytecache: cache closed")
	// ErrCorrupt is wrapped by the errors LoadFrom returns for a snapshot
	// that is malformed, truncated, fails its checksums, or has a version
	// this package cannot read.
	ErrCorrupt = errors.New("bytecache: corrupt snapshot")
)

// hasher hashes keys with a per-cache random seed.
type hasher struct {
	seed maphash.Seed
	mask uint64 // all ones; tests clear bits to force collisions
}

func (h *hasher) sum(b []byte) uint64 { return maphash.Bytes(h.seed, b) & h.mask }

// Cache is a byte cache: keys and values are byte strings, stored in large
// chunks outside the reach of the garbage collector's scan. See the package
// documentation.
//
// Every method is safe for concurrent use. A Cache must not be copied after
// first use.
type Cache struct {
	shards []shard
	shift  uint // a hash's top bits choose the shard: h >> shift
	hash   hasher
	cf     config
	closed atomic.Bool
	// offHeap: chunks are mapped outside the Go heap.
	offHeap bool
}

// shard is a store behind a lock, with the counters that readers update.
type shard struct {
	// The lock and the counters every read updates share a cache line.
	mu         sync.RWMutex
	hits       atomic.Uint64
	misses     atomic.Uint64
	collisions atomic.Uint64

	st store // guarded by mu

	_ [64]byte // keeps neighbouring shards' hot words apart
}

// New returns a cache configured by opts, or an error wrapping
// ErrInvalidOptions.
func New(opts Options) (*Cache, error) {
	cf, err := opts.config()
	if err != nil {
		return nil, err
	}
	c := &Cache{
		shards: make([]shard, cf.shards),
		cf:     cf,
		hash:   hasher{seed: maphash.MakeSeed(), mask: math.MaxUint64},
	}
	c.shift = 64
	for n := cf.shards; n > 1; n >>= 1 {
		c.shift--
	}
	c.offHeap = offHeapSupported && !cf.heap && 1<<c.cf.chunkShift >= os.Getpagesize()
	for i := range c.shards {
		c.shards[i].st = c.newStore()
	}
	if c.offHeap {
		// Release the mapped chunks of a cache dropped without Close. The
		// shards do not refer to c, so c can become unreachable.
		runtime.AddCleanup(c, releaseShards, c.shards)
	}
	return c, nil
}

func releaseShards(shards []shard) {
	for i := range shards {
		sh := &shards[i]
		sh.mu.Lock()
		sh.st.reset()
		sh.mu.Unlock()
	}
}

// Must is like New but panics if opts are invalid. It suits package-level
// caches with constant options.
func Must(opts Options) *Cache {
	c, err := New(opts)
	if err != nil {
		panic(err)
	}
	return c
}

func (c *Cache) newStore() store {
	return newStore(c.cf.ringSize, c.cf.chunkShift, c.offHeap, c.hash)
}

// nowNano reads the clock, in Unix nanoseconds.
func (c *Cache) nowNano() int64 { return c.cf.now().UnixNano() }

func (c *Cache) shardOf(h uint64) *shard { return &c.shards[h>>c.shift] }

// Set stores a copy of key and value; the caller may modify both afterwards.
// The entry expires ttl after now; ttl == 0 means Options.DefaultTTL and a
// negative ttl means it never expires, as does an entry whose expiry would
// fall past the year 2262 (beyond Unix nanoseconds). Setting a key replaces
// its entry and makes it the newest in its shard. To make room, Set evicts
// the oldest entries of the shard.
//
// Set returns ErrClosed after Close, whatever it is given; otherwise
// ErrKeyTooLarge or ErrValueTooLarge (wrapped) for an entry it cannot
// store, leaving any previous entry for key in place.
func (c *Cache) Set(key, value []byte, ttl time.Duration) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if len(key) > c.cf.maxKey {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrKeyTooLarge, len(key), c.cf.maxKey)
	}
	if len(value) > c.cf.maxValue {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrValueTooLarge, len(value), c.cf.maxValue)
	}
	if ttl == 0 {
		ttl = c.cf.defaultTTL
	}
	now := lazyNow{fn: c.nowNano}
	var exp int64
	hasExp := ttl > 0
	if hasExp {
		n := now.get()
		exp = n + int64(ttl)
		if exp < n {
			// Past the year 2262, the last instant a Unix nanosecond
			// time (and the clock) can tell: the entry never expires,
			// and All says so rather than give it that year.
			exp, hasExp = 0, false
		}
	}
	if size := headerLen(len(key), len(value), hasExp) + len(key) + len(value); size > int(c.cf.ringSize) {
		return fmt.Errorf("%w: entry of %d bytes with its key, a shard holds %d", ErrValueTooLarge, size, c.cf.ringSize)
	}
	h := c.hash.sum(key)
	sh := c.shardOf(h)
	sh.mu.Lock()
	// Deferred: making room may read the clock, which may panic.
	defer sh.mu.Unlock()
	if c.closed.Load() {
		return ErrClosed
	}
	if coll := sh.st.set(key, value, uint32(h), exp, hasExp, &now); coll > 0 {
		sh.collisions.Add(uint64(coll))
	}
	return nil
}

// Get appends the value stored for key to dst and returns the result and
// true, or dst and false if key is absent or expired. The returned slice
// belongs to the caller; with a dst of enough capacity Get allocates
// nothing.
func (c *Cache) Get(dst, key []byte) ([]byte, bool) {
	dst, sh, ok := c.get(dst, key)
	if ok {
		sh.hits.Add(1)
	}
	return dst, ok
}

// get is Get without counting a hit: it returns key's shard, on which the
// caller counts the hit (Typed counts a miss instead if the value does not
// decode). A miss is counted.
func (c *Cache) get(dst, key []byte) ([]byte, *shard, bool) {
	h := c.hash.sum(key)
	sh := c.shardOf(h)
	sh.mu.RLock()
	// Held, the lock keeps releaseShards out; until it is, c must stay
	// reachable, or a call that is the caller's last use of c could find
	// its shard emptied by the cleanup (see New).
	runtime.KeepAlive(c)
	slot, off, hd, coll := sh.st.lookup(key, uint32(h))
	if slot < 0 {
		sh.mu.RUnlock()
		c.miss(sh, coll)
		return dst, sh, false
	}
	if hd.hasExp && hd.exp <= c.nowRLocked(&sh.mu) {
		sh.mu.RUnlock()
		c.expire(sh, key, uint32(h))
		c.miss(sh, coll)
		return dst, sh, false
	}
	dst = sh.st.appendValue(dst, off, &hd)
	sh.mu.RUnlock()
	if coll > 0 {
		sh.collisions.Add(uint64(coll))
	}
	return dst, sh, true
}

// nowRLocked reads the clock with mu read-locked. If the clock panics, it
// releases mu first: the panic must not leave the shard locked for ever.
func (c *Cache) nowRLocked(mu *sync.RWMutex) int64 {
	ok := false
	defer func() {
		if !ok {
			mu.RUnlock()
		}
	}()
	n := c.nowNano()
	ok = true
	return n
}

func (c *Cache) miss(sh *shard, coll int) {
	sh.misses.Add(1)
	if coll > 0 {
		sh.collisions.Add(uint64(coll))
	}
}

// expire removes key's entry if it has expired. It is the second look of
// a read that found the entry expired: the keys it compares again are not
// counted as collisions a second time. The key may have been set again
// meanwhile; the clock is read only if its entry has a TTL.
func (c *Cache) expire(sh *shard, key []byte, tag uint32) {
	sh.mu.Lock()
	defer sh.mu.Unlock() // the clock may panic
	slot, _, hd, _ := sh.st.lookup(key, tag)
	if slot >= 0 && hd.hasExp && hd.exp <= c.nowNano() {
		sh.st.drop(slot, &hd)
		sh.st.st.expirations++
	}
}

// Has reports whether key has an unexpired entry. It does not count as a
// hit or a miss.
func (c *Cache) Has(key []byte) bool {
	h := c.hash.sum(key)
	sh := c.shardOf(h)
	sh.mu.RLock()
	runtime.KeepAlive(c) // as in get
	slot, _, hd, coll := sh.st.lookup(key, uint32(h))
	ok := slot >= 0 && !(hd.hasExp && hd.exp <= c.nowRLocked(&sh.mu))
	sh.mu.RUnlock()
	if coll > 0 {
		sh.collisions.Add(uint64(coll))
	}
	return ok
}

// Delete removes key's entry and reports whether it was live (present and
// unexpired).
func (c *Cache) Delete(key []byte) bool {
	h := c.hash.sum(key)
	sh := c.shardOf(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	runtime.KeepAlive(c) // as in get
	slot, _, hd, coll := sh.st.lookup(key, uint32(h))
	if coll > 0 {
		sh.collisions.Add(uint64(coll))
	}
	if slot < 0 {
		return false
	}
	sh.st.drop(slot, &hd)
	if hd.hasExp && hd.exp <= c.nowNano() {
		sh.st.st.expirations++
		return false
	}
	sh.st.st.deletes++
	return true
}

// Len returns the number of live entries. Expired entries that no read has
// removed yet are removed first: Len scans the shards in which an entry may
// have expired since the previous scan, so it costs O(Shards) when no
// entry has expired and up to O(entries) otherwise.
func (c *Cache) Len() int {
	n := 0
	var now int64
	haveNow := false
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		count, sweep := sh.st.count, false
		// Not minExp != noExpiry: an entry may expire at math.MaxInt64.
		if sh.st.ttlLive > 0 {
			if !haveNow {
				now, haveNow = c.nowRLocked(&sh.mu), true
			}
			sweep = sh.st.minExp <= now
		}
		sh.mu.RUnlock()
		if sweep {
			sh.mu.Lock()
			sh.st.sweep(now)
			count = sh.st.count
			sh.mu.Unlock()
		}
		n += count
	}
	return n
}

// Clear removes every entry and releases the chunks and the indexes. The
// counters of Stats keep their values.
func (c *Cache) Clear() {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.st.reset()
		sh.mu.Unlock()
	}
}

// Close releases the cache's memory. Afterwards Set and the snapshot methods
// return ErrClosed and reads miss. Close is idempotent and always returns
// nil.
func (c *Cache) Close() error {
	c.closed.Store(true)
	c.Clear()
	return nil
}
