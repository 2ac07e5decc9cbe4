package cachekit

import (
	"fmt"
	"hash/maphash"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cachekit/cachekit/internal/buffer"
	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
	"github.com/cachekit/cachekit/internal/policy"
	"github.com/cachekit/cachekit/internal/wheel"
)

// Cache is a concurrent, bounded, typed in-memory cache.
//
// All methods are safe for concurrent use. Reads (Get, Peek, GetMany) look
// their key up without a lock; Get and GetMany then record the access in a
// lossy buffer that the eviction policy consumes later, in batches, under
// the cache's maintenance lock (Peek records nothing; All locks each index
// segment in turn, briefly, to copy it). Writes lock one of many index
// segments and queue a record for the policy. Maintenance (applying those
// records, evicting, expiring) runs on whichever
// goroutine finds the maintenance lock free after a write (Set or Delete)
// whose record completes a batch of the write queue or finds it full, or
// after filling a read buffer; in Clear and Stats; and about once a second
// on a background goroutine that Close stops. (A write queues no record,
// and so never runs maintenance, in an unbounded cache when neither the
// entry written nor the one it removes has a TTL.) The background
// goroutine also refreshes the cached clock every millisecond while
// entries with a TTL are present. So an expired entry is never returned,
// and is reclaimed (and reported to OnEvict) within about a second if
// nothing else runs maintenance.
//
// A value stored in the cache is returned as is, never copied: if V holds
// pointers, the caller must not mutate what they point to after Set unless
// it synchronises with readers itself.
//
// A Cache must not be copied; use the pointer New returns.
type Cache[K comparable, V any] struct {
	c       *cache[K, V]
	cleanup runtime.Cleanup // stops c's goroutine if the Cache is dropped
	get     getter[K, V]
	// Every operation reads the handle: it fills a cache line (see hotLine).
	_ [hotLine - unsafe.Sizeof((*int)(nil)) - unsafe.Sizeof(runtime.Cleanup{}) - unsafe.Sizeof(getter[K, V]{})]byte
}

// getter holds copies of the cache's fields that a Get reads before it
// reaches the index, all set once by New: kept in the handle, a hit starts
// its chain of dependent loads (table pointer, table, group, slot, entry)
// from the handle rather than from the shared state behind it, one load
// shorter: as many as an xsync.Map load's (its table, the table's header,
// the bucket, the entry). In a single-goroutine loop of hits on a cache of
// 32,768 entries holding 512 or 10,000 keys (stats off, so only the index
// is measured), the median of 20 interleaved pairs of runs took 6% less
// time per Get than reading them through the handle's pointer.
type getter[K comparable, V any] struct {
	tabs       *atomic.Pointer[table[K, V]] // &cache.tabs[0]
	seed64     uint64
	seed       maphash.Seed
	segShift   uint8
	keyKind    keyKind
	vkind      uint8
	countReads bool
}

// cache is the shared state. The background goroutine refers to it, never
// to the Cache handle, so a Cache dropped without Close can be collected and
// its cleanup stops the goroutine.
type cache[K comparable, V any] struct {
	segs     []segment[K, V]
	tabs     []atomic.Pointer[table[K, V]] // segment i's current table is tabs[i]
	segShift uint
	seed     maphash.Seed
	keyKind  keyKind // how hash hashes a key (hash.go)
	seed64   uint64  // the seed of the integer hash
	// probeMul is the odd multiplier of probe's hash. Every operation reads
	// it, spread changes it at most once per spreadPeriod: it shares this
	// read-mostly line.
	probeMul atomic.Uint64
	hasher   func(K) uint64 // test hook: forced collisions; nil in production
	vkind    int            // how entries hold values (value.go)
	// countReads is !Options.DisableStats: Get counts hits and misses.
	countReads bool

	bounded    bool
	weigher    func(K, V) uint32
	maxWeight  uint64
	defaultTTL time.Duration
	jitter     float64
	random     func() float64 // test hook for jitter; nil means math/rand/v2
	onEvict    func(K, V, Cause)

	clock   Clock     // nil: the cached monotonic clock below
	start   time.Time // time zero of the cache's clock
	nowNano atomic.Int64
	// selfClock is nonzero while the background goroutine does not keep
	// the cached clock: after it has exited, and while it runs OnEvict
	// callbacks (which may take any time). Readers then take the time
	// themselves.
	selfClock atomic.Int32
	spreadAt  atomic.Int64 // the earliest time (as born) of the next spread
	// born is the machine's time (monotonic) when the cache was created:
	// the origin of spreadAt, which an injected Clock must not move (one
	// set in the future would make every spread wait for it).
	born    time.Time
	ttlUsed atomic.Bool // entries with a TTL may exist: keep the fast clock
	wake    chan struct{}

	reads *buffer.Striped[entry[K, V]]
	// recordReads turns on once the policy is half full. Before that no
	// eviction is near and reads skip the read buffer altogether (as
	// Caffeine does before it sizes its sketch). It is on from the start
	// for a policy that orders entries by every read (see
	// policy.SkipsEarlyReads).
	recordReads atomic.Bool
	writes      *buffer.Queue[event[K, V]]
	// writeBatch is the number of queued write records at which a writer
	// runs maintenance (see maxWriteBatch).
	writeBatch int
	stats      []statStripe

	// The maintenance lock is written by every maintenance pass and every
	// writer's attempt at one: it starts a cache line of its own, away from
	// the fields above that every Get reads.
	_       [64]byte
	mu      sync.Mutex // the maintenance lock: guards the fields below
	policy  policy.Policy
	warmer  policy.Warmer // the policy, if it is one (see popWrites)
	batch   [writeChunk]event[K, V]
	warmSum uint64 // see policy.Warmer
	wheel   *wheel.Wheel
	pending []removal[K, V]
	// victims holds the entries that maintenance took out of the policy and
	// the wheel (evicted, or expired by the wheel) and that are still in the
	// index: taking them out of it is the last step of a maintenance pass,
	// done after the lock is released (see maintain). spares are emptied
	// buffers for the next passes, so that passes do not allocate: more
	// than one, because passes overlap while they drop their victims.
	victims *victimBuf[K, V]
	spares  [maxSpares]atomic.Pointer[victimBuf[K, V]]
	// dropping counts the passes that are taking their victims out of the
	// index, having released the lock (see readerPass).
	dropping atomic.Int32
	// unqueued counts the entries with a TTL in the index whose writers
	// found the write queue full and report a replaced value before they
	// queue their record (see removedThen and timed).
	unqueued atomic.Int32
	// waiting maps an entry whose write record has not been applied yet
	// to the entry that replaced it and waits for it (see applyWrite);
	// waitingFor is its reverse.
	waiting, waitingFor map[*entry[K, V]]*entry[K, V]
	backlog             bool // the wheel has due work left
	// evictions counts the removals by cause: capacity, expired (by the
	// wheel), cleared.
	evictions [numCauses]atomic.Uint64

	cbMu       sync.Mutex
	inCallback bool // the background goroutine is running OnEvict; guarded by cbMu
	// lateCallbacks is closed when the background goroutine starts
	// callbacks after Close has signalled it to stop (see Close);
	// lateClosed says it is, guarded by cbMu.
	lateCallbacks chan struct{}
	lateClosed    bool

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	fastTick time.Duration // clock refresh period
	slowTick time.Duration // maintenance period
}

// victim is an entry to take out of the index, and why.
type victim[K comparable, V any] struct {
	e     *entry[K, V]
	h     uint64 // e.key's hash, set by dropVictims
	cause Cause
}

type victimBuf[K comparable, V any] struct {
	vs   []victim[K, V]
	warm uint64 // what dropVictims read ahead (kept so the reads stay)
}

// maxSpareVictims is the largest victim buffer kept for reuse: twice the
// write queue, as a pass applies at most one queue's worth of writes and
// append doubles a buffer's capacity past its length. A pass that evicts
// more (a cache shrunk by far, a mass expiry) allocates its own. It was a
// constant 1,024 before, the length of the write queue of a cache of
// 100,000 entries on two processors: a pass of more than 682 victims grew
// its buffer to 1,135 (append's step for 24-byte victims) and threw it
// away, and on BenchmarkEvict (uniform, 90% reads, 2 and 32 goroutines)
// that was 35-40 of the 80 bytes allocated per operation (41 now).
func (c *cache[K, V]) maxSpareVictims() int {
	return 2 * c.writes.Cap()
}

// maxSpares is the number of emptied victim buffers kept for reuse. With
// one, passes that overlapped found none and allocated: 13,078 buffers
// allocated in a run of BenchmarkEvict (uniform, 90% reads, 2 and 32
// goroutines) against 201 with four, and 51-55 bytes per operation
// against 41.
const maxSpares = 4

type removal[K comparable, V any] struct {
	key   K
	value V
	cause Cause
}

// event tells the policy about a write: e added (old nil), old replaced
// by e, or e removed (old == e, which no write can otherwise produce).
type event[K comparable, V any] struct {
	e, old *entry[K, V]
}

// maxWriteBatch is the most queued write records that make a writer run
// maintenance. Batching spares writers the maintenance lock, at the price of
// letting the index exceed the bound by up to the batch until maintenance
// runs; so the batch is at most MaxEntries/writeBatchShare, and 1 for
// caches bounded by weight (where one entry may be a large share of the
// bound).
const maxWriteBatch = 32

// writeBatchShare bounds the write batch of a cache bounded by count to
// MaxEntries/writeBatchShare, so that one writer never takes the index more
// than 0.1% past the bound (the full batch from 32,768 entries, 1 up to
// 2,047). It was 16: up to 6% past, and a trace replayed through the cache
// scored as a larger cache's (arc-oltp at 250 entries: 27.22% hits against
// 26.64% with the bound held; at 32 entries, more than Bélády's optimum).
// A pass for every write instead, the bound held however large the cache,
// cost 10 to 27% (median 15%) of the throughput on uniform keys over 10
// times a capacity of 100,000 (bench/cmd/throughput, 3 alternating runs).
const writeBatchShare = 1024

// writeQueueSize returns the capacity of the write queue (which rounds it
// up to a power of two): 128 records per processor, or a 128th of the
// maximum count if that is more, up to 512 per processor. A longer queue
// stalls writers less often when they outpace maintenance (BenchmarkEvict,
// uniform keys, 2 and 8 goroutines, two processors: 7% less time per
// operation with 512 per processor than with 128, 3% with 256, and 1024
// gained 2% more, within noise), but the entries it holds are not yet
// known to the policy, so a small cache keeps it short: it bounds how far
// the index may exceed the maximum. So a cache bounded by count queues at
// most a sixteenth of its maximum (minWriteQueue at least; rounded up to a
// power of two, so up to an eighth), whatever the number of processors: a
// cache of 1,000 entries on two processors had a
// queue of 256 records (6 kB, 6 bytes per entry, and a quarter of the
// maximum in the index unknown to the policy), now 64.
func writeQueueSize(maxEntries, procs int) int {
	n := min(512*procs, max(128*procs, maxEntries/128))
	if maxEntries > 0 {
		n = min(n, max(minWriteQueue, maxEntries/16))
	}
	return n
}

// minWriteQueue is the shortest write queue: two of the largest batches.
const minWriteQueue = 2 * maxWriteBatch

// segments returns the number of index segments for a cache of at most
// maxEntries entries (0: unbounded) on procs processors: a power of two,
// 4 at least, up to 32 per processor but no more than one per
// minSegmentEntries of the bound past the first 4. Writers of one segment
// take turns on its lock, and the lock's cache line moves between the
// cores that write to it, so more segments let more writes proceed on a
// core's own lines; each costs a few hundred bytes of its own, and
// splits the index into more tables that grow in more steps, which small
// caches are spared. Measured with bench/cmd/throughput (two processors,
// runs of the old and the new code alternating, medians of the per-cell
// ratios): with 64 segments instead of 16, getput (32,768 entries, Zipf
// keys) 75/25 ran at 1.06 times the throughput and 25/75 at 1.10 to 1.20
// times, 100/0 the same; the evicting workloads (100,000 entries) at
// about 0.97 times. 256 segments gained 1.03 times more on the write
// mixes. A cache of 1,000 entries with 4 segments instead of 16 took 7
// bytes less per entry (memory.md's method, 100 caches), and ran the
// evicting workloads at a capacity of 1,000 (100, 90 and 50% reads, 2 and
// 8 goroutines, 4 alternating pairs) at 1.01 times the throughput.
//
// A large cache also gets one segment per maxSegmentEntries of its bound
// (or without one, of initial, Options.InitialCapacity: the only size
// known of a cache bounded by weight), up to maxSegments, whatever the
// processors: a segment's table grows (or, churned, is tidied) by a
// rebuild that hashes every key it holds again under the segment's lock,
// and a Set that finds the lock taken waits for the rebuild. While
// a cache bounded at 10 million entries filled (one goroutine, two
// processors), with 64 segments about a hundred Sets took 20 to 300 ms,
// nearly all waiting for rebuilds; with 1,024, a dozen took 20 to 35 ms,
// none for a rebuild of more than 20 ms.
func segments(maxEntries, initial, procs int) int {
	n := 4
	for n < 32*procs && n < 1024 && (maxEntries == 0 || 2*n*minSegmentEntries <= maxEntries) {
		n <<= 1
	}
	size := maxEntries
	if size == 0 {
		size = initial
	}
	for n < maxSegments && size/n > maxSegmentEntries {
		n <<= 1
	}
	return n
}

// minSegmentEntries is the fewest entries per segment of a bounded cache
// for which segments adds segments beyond the first 4; maxSegmentEntries
// the most, up to maxSegments segments.
const (
	minSegmentEntries = 512
	maxSegmentEntries = 16384
	maxSegments       = 4096
)

// expireBudget bounds how many timer-wheel nodes one maintenance pass visits.
const expireBudget = 4096

// New returns a cache configured by opts, or an error wrapping
// ErrInvalidOptions that names the offending option.
func New[K comparable, V any](opts Options[K, V]) (*Cache[K, V], error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	procs := runtime.GOMAXPROCS(0)
	nseg := segments(opts.MaxEntries, opts.InitialCapacity, procs)
	c := &cache[K, V]{
		segs:       make([]segment[K, V], nseg),
		tabs:       make([]atomic.Pointer[table[K, V]], nseg),
		seed:       maphash.MakeSeed(),
		keyKind:    kindOfKey[K](),
		vkind:      valueKind[V](),
		countReads: !opts.DisableStats,
		weigher:    opts.Weigher,
		defaultTTL: opts.DefaultTTL,
		jitter:     opts.TTLJitter,
		onEvict:    opts.OnEvict,
		clock:      opts.Clock,
		wake:       make(chan struct{}, 1),
		reads:      buffer.NewStriped[entry[K, V]](2 * procs), // see buffer's stripeSize
		writes:     buffer.NewQueue[event[K, V]](writeQueueSize(opts.MaxEntries, procs)),
		stats:      make([]statStripe, statStripes(procs)),
		stop:       make(chan struct{}),
		done:       make(chan struct{}),

		lateCallbacks: make(chan struct{}),
		fastTick:      time.Millisecond,
		slowTick:      time.Second,
	}
	for 1<<c.segShift < nseg {
		c.segShift++
	}
	c.segShift = 64 - c.segShift
	c.seed64 = maphash.Comparable(c.seed, uint64(0))
	c.probeMul.Store(rand.Uint64() | 1)
	// Keys spread over segments unevenly: room for the fullest, not the
	// mean (a segment sized for its mean share grows as the cache fills).
	perSeg, share := 0, 0
	if opts.InitialCapacity > 0 {
		perSeg = withSlack(ceilDiv(opts.InitialCapacity, nseg))
	}
	if opts.MaxEntries > 0 {
		share = ceilDiv(opts.MaxEntries, nseg)
		perSeg = min(perSeg, withSlack(share))
	}
	hash := c.hash
	for i := range c.segs {
		c.segs[i].tab = &c.tabs[i]
		c.segs[i].init(perSeg, share, hash)
	}
	c.born = time.Now()
	if c.clock != nil {
		start, err := readClock(c.clock)
		if err != nil {
			return nil, fmt.Errorf("%w: Clock %T: %w", ErrInvalidOptions, c.clock, err)
		}
		c.start = start
	} else {
		c.start = c.born
	}
	switch {
	case opts.MaxEntries > 0:
		c.maxWeight = uint64(opts.MaxEntries)
		c.writeBatch = min(maxWriteBatch, max(1, opts.MaxEntries/writeBatchShare))
	case opts.MaxWeight > 0:
		c.maxWeight = opts.MaxWeight
		c.writeBatch = 1
	default:
		c.writeBatch = maxWriteBatch
	}
	if c.maxWeight > 0 {
		p, err := policy.New(opts.Policy, c.maxWeight, opts.Weigher != nil, rand.Uint64(), c.nodeHash)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		c.bounded = true
		c.policy = p
		c.warmer, _ = p.(policy.Warmer)
		if !policy.SkipsEarlyReads(p) {
			c.recordReads.Store(true)
		}
	}
	c.wheel = wheel.New(0)
	if c.defaultTTL > 0 {
		c.ttlUsed.Store(true)
	}
	go c.run()
	h := &Cache[K, V]{c: c, get: getter[K, V]{
		tabs: &c.tabs[0], seed64: c.seed64, seed: c.seed, segShift: uint8(c.segShift),
		keyKind: c.keyKind, vkind: uint8(c.vkind), countReads: c.countReads,
	}}
	// The cleanup only signals the goroutine to stop: it runs on the
	// runtime's cleanup goroutine, which must not block.
	h.cleanup = runtime.AddCleanup(h, func(c *cache[K, V]) { c.signalStop() }, c)
	return h, nil
}

// readClock returns clock's reading, or its panic as an error: New's first
// reading finds a Clock that cannot be read (a nil *FakeClock in the
// interface, say) before anything runs it.
func readClock(clock Clock) (t time.Time, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("its Now panicked: %v", r)
		}
	}()
	return clock.Now(), nil
}

// Must is like New but panics if the options are invalid. It is meant for
// options fixed in the program's source, where an error is a programming
// error.
func Must[K comparable, V any](opts Options[K, V]) *Cache[K, V] {
	c, err := New(opts)
	if err != nil {
		panic(err)
	}
	return c
}

// Close stops the cache's background goroutine. The cache stays usable
// afterwards (maintenance then happens only on the callers' goroutines,
// and expired entries are reclaimed only when other operations run
// maintenance), so Close is safe to call while other goroutines still use
// the cache. Close is idempotent and returns when the goroutine has exited.
// If the background goroutine is running OnEvict callbacks (which may
// themselves have called Close, or wait for a lock Close's caller holds),
// or starts them while Close waits (reporting a pass begun before Close),
// Close returns without waiting for them; the goroutine exits when they
// return. A Cache that becomes unreachable without Close is stopped when
// the garbage collector finds it, unless OnEvict, the Weigher or the Clock
// refers to it (they are reachable from the background goroutine, and keep
// the Cache reachable): such a cache must be closed.
func (h *Cache[K, V]) Close() {
	h.cleanup.Stop()
	c := h.c
	c.signalStop()
	// The background goroutine may be running OnEvict, which may be what
	// called Close, or may wait for a lock Close's caller holds: waiting
	// for it to exit could wait forever. It exits as soon as the
	// callbacks return. So Close waits for it only until it starts
	// callbacks: a pass it had begun before the stop may report its
	// removals after this check.
	c.cbMu.Lock()
	busy := c.inCallback
	c.cbMu.Unlock()
	if !busy {
		select {
		case <-c.done:
		case <-c.lateCallbacks:
		}
	}
	runtime.KeepAlive(h)
}

func (c *cache[K, V]) signalStop() {
	c.stopOnce.Do(func() { close(c.stop) })
}

// run is the background goroutine: it refreshes the cached clock and runs
// maintenance, so expired entries are reclaimed without any reads.
func (c *cache[K, V]) run() {
	defer close(c.done)
	// Without this goroutine the cached clock would stop: from now on
	// every read takes the time itself.
	defer c.selfClock.Add(1)
	fast := c.ttlUsed.Load() && c.clock == nil
	period := c.slowTick
	if fast {
		period = c.fastTick
	}
	t := time.NewTicker(period)
	defer t.Stop()
	c.refreshNow()
	last := c.now()
	quick := false // with Options.Clock: ticking fast for a backlog
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
			if !fast && c.clock == nil {
				fast = true
				t.Reset(c.fastTick)
			}
			continue
		case <-t.C:
			// A tick that came while a pass ran OnEvict callbacks may
			// be pending next to the stop: Close's caller must not see
			// a pass begin after Close returned.
			select {
			case <-c.stop:
				return
			default:
			}
		}
		c.refreshNow()
		now := c.now()
		if !fast || c.backlogged() || now-last >= int64(c.slowTick) {
			last = now
			c.maintainFromBackground()
			if c.clock != nil {
				// Options.Clock: no fast clock to keep, but a backlog of
				// expired entries is worked off at the fast tick, as
				// with the system clock, not a pass a second.
				if b := c.backlogged(); b != quick {
					quick = b
					if b {
						t.Reset(c.fastTick)
					} else {
						t.Reset(c.slowTick)
					}
				}
			}
			if fast && !c.timed() {
				// No entry with a TTL is left: stop the fast clock until
				// a write with a TTL wakes it (see noteTTL).
				fast = false
				t.Reset(c.slowTick)
			}
		}
	}
}

func (c *cache[K, V]) backlogged() bool {
	c.lockFromBackground()
	b := c.backlog
	c.mu.Unlock()
	return b
}

// timed reports whether entries with a TTL may be in the cache, clearing
// ttlUsed if not. Together with noteTTL it is a Dekker-style handshake: a
// writer publishes its entry, then checks ttlUsed; this clears ttlUsed, then
// checks for such entries. One of the two sees the other, so the fast clock
// never stops while an entry with a TTL is in the index.
func (c *cache[K, V]) timed() bool {
	c.ttlUsed.Store(false)
	c.lockFromBackground()
	// An entry whose record waits for its predecessor's (see applyWrite)
	// is in neither the queue nor the wheel yet; nor is one whose writer
	// found the queue full and reports the value it replaced before
	// queueing (unqueued), nor a victim that a caller's pass has taken off
	// the wheel but not yet out of the index (dropping). Each is in the
	// index, where a Get compares its deadline with the clock: stopping
	// the fast clock then let Gets return it up to a second past it.
	busy := c.wheel.Len() > 0 || c.writes.Len() > 0 || len(c.waiting) > 0 ||
		c.dropping.Load() > 0 || c.unqueued.Load() > 0
	c.mu.Unlock()
	if busy {
		c.ttlUsed.Store(true)
	}
	return busy
}

// noteTTL makes sure the fast clock runs, after an entry with a TTL was
// written and queued.
func (c *cache[K, V]) noteTTL() {
	if c.ttlUsed.Load() || c.clock != nil {
		return
	}
	c.ttlUsed.Store(true)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// refreshNow stores the current monotonic time in the cached clock, never
// moving it backwards.
func (c *cache[K, V]) refreshNow() {
	if c.clock != nil {
		return
	}
	n := int64(time.Since(c.start))
	for {
		old := c.nowNano.Load()
		if n <= old || c.nowNano.CompareAndSwap(old, n) {
			return
		}
	}
}

// now returns the cache's time in nanoseconds since it was created.
func (c *cache[K, V]) now() int64 {
	if c.clock != nil {
		return int64(c.clock.Now().Sub(c.start))
	}
	if c.selfClock.Load() != 0 {
		c.refreshNow()
	}
	return c.nowNano.Load()
}

func (c *cache[K, V]) hash(key K) uint64 {
	if c.keyKind == keyInt64 {
		// The bijective mixer spreads sequential keys as a random hash
		// would; with the random per-cache seed, an outsider cannot tell
		// which keys collide.
		return hashInt(*(*uint64)(unsafe.Pointer(&key)), c.seed64)
	}
	return c.hashOther(key)
}

// hashInt is hash for integer keys: small enough that the compiler inlines
// it, and mix.Mix in it, into hash (it did not inline mix.Mix called
// directly from a method of the generic cache).
func hashInt(k, seed uint64) uint64 { return mix.Mix(k ^ seed) }

// hashString is hash for keys of a string kind (keyString), small enough
// to inline into Get.
func hashString[K comparable](key K, seed maphash.Seed) uint64 {
	return maphash.String(seed, *(*string)(unsafe.Pointer(&key)))
}

// hashOther is hash for keys that are not integers.
func (c *cache[K, V]) hashOther(key K) uint64 {
	if c.keyKind == keyString {
		return hashString(key, c.seed)
	}
	if c.hasher != nil {
		return c.hasher(key)
	}
	return maphash.Comparable(c.seed, key)
}

// nodeHash is the policy's node.Hasher: entries do not keep their key's
// hash, so the policy's maintenance recomputes it from the key.
func (c *cache[K, V]) nodeHash(n *node.Node) uint64 {
	return c.hash(toEntry[K, V](n).key)
}

func (c *cache[K, V]) segment(h uint64) *segment[K, V] {
	return &c.segs[h>>c.segShift]
}

// table returns the current table of h's segment. Lock-free: lookups read
// the array of table pointers, never the segment itself.
func (c *cache[K, V]) table(h uint64) *table[K, V] {
	return c.tabs[h>>c.segShift].Load()
}

// probe returns a cheap per-goroutine number, nonzero, that stripe maps to
// the goroutine's stripe of the read buffer and of the counters: the
// address of a stack variable, which differs between goroutines (each has
// its own stack) and is stable while a goroutine stays at a similar call
// depth. It costs nothing, unlike a random number, and keeps a goroutine on
// the same stripe, whose cache line then stays in its core's cache.
func probe() uint64 {
	var b byte
	return uint64(uintptr(unsafe.Pointer(&b))) >> 10
}

// stripe hashes a goroutine's probe to a stripe number (the caller masks
// it). Multiply-shift, on the low 40+log2(stripes) bits: with a random odd
// multiplier, two given probes share a stripe with probability at most
// 2/stripes.
//
// Two goroutines that run at the same time may still share a stripe, and
// then every operation of both moves the stripe's line between their
// cores: in BenchmarkGetPut at 100% reads with two goroutines on two
// cores, a Get took 2.4× as long with every goroutine forced onto one
// stripe, and 2 runs in 16 found their two goroutines on one stripe. Reads
// notice a shared stripe, by sampling who counts hits on it (buffer.Sample)
// or by losing a race for a slot of the read buffer, and call contended,
// which changes the multiplier for every goroutine (Java's Striped64 moves
// only the thread that collided, but a goroutine has nowhere to keep a
// probe of its own).
func (c *cache[K, V]) stripe(probe uint64) uint64 {
	return probe * c.probeMul.Load() >> 40
}

// contended is called by a goroutine that found another goroutine on its
// stripe: it spreads the goroutines again, at most once per spreadPeriod,
// so that goroutines that share stripes whatever the hash (more of them
// running than stripes, or taking turns on one core) do not keep the
// read-mostly line of probeMul moving.
func (c *cache[K, V]) contended() {
	c.spread(int64(time.Since(c.born)))
}

// spread changes probe's multiplier, unless it changed less than
// spreadPeriod before now (nanoseconds since c.born).
func (c *cache[K, V]) spread(now int64) {
	next := c.spreadAt.Load()
	if now < next || !c.spreadAt.CompareAndSwap(next, now+spreadPeriod) {
		return
	}
	// An even step keeps the multiplier odd; this one (twice the 64-bit
	// golden ratio) visits every odd multiplier before it repeats.
	c.probeMul.Add(0x3c6ef372fe94f82a)
}

const spreadPeriod = int64(time.Millisecond)

// Get returns the value stored for key and reports whether it was found.
// An expired entry is never returned. Get counts a hit or a miss and tells
// the eviction policy about the access.
func (h *Cache[K, V]) Get(key K) (V, bool) {
	g := &h.get
	// c.hash(key) and c.table(hash).get(key, hash), written out from the
	// handle's copies: neither is small enough for the compiler to inline,
	// and a hit is a chain of dependent loads (the table, the group, the
	// slot, the entry) that a call makes longer.
	var hash uint64
	switch g.keyKind {
	case keyInt64:
		hash = hashInt(*(*uint64)(unsafe.Pointer(&key)), g.seed64)
	case keyString:
		hash = hashString(key, g.seed)
	default:
		hash = h.c.hashOther(key)
	}
	// hash>>segShift is below the number of segments (a power of two).
	t := (*atomic.Pointer[table[K, V]])(unsafe.Add(unsafe.Pointer(g.tabs),
		uintptr(hash>>g.segShift)*unsafe.Sizeof(atomic.Pointer[table[K, V]]{}))).Load()
	i := t.home(hash)
	ctl := t.groups[i].ctrl.Load()
	e := t.groups[i].lookup(key, ctl, tag(hash))
	if e == nil || e.Tag&tagTimed != 0 {
		return h.getRest(key, hash, t, i, ctl, e)
	}
	if g.countReads || h.c.recordReads.Load() {
		h.c.afterRead(e)
	}
	return loadValue(int(g.vkind), e), true
}

// getRest finishes a Get that did not find key in its home group (the
// probe goes on past it if keys overflowed from there) or found an entry
// with a deadline (which may have passed). Kept out of Get, so that Get
// itself is only the common case, a hit in the home group on an entry
// without a TTL. Measured: single-goroutine loops of hits (512 and 4,096
// uint64 keys in a cache of 32,768, stats off) took a median 5.6% and 8.0%
// less time per Get over 8 alternating pairs of runs; in bench's GetPut
// cell (100/0, 2 goroutines, 9,676 keys, where a hit waits mostly on
// memory) the median of 10 pairs did not move (0.99).
//
//go:noinline
func (h *Cache[K, V]) getRest(key K, hash uint64, t *table[K, V], i int, ctl uint64, e *entry[K, V]) (V, bool) {
	if e == nil && overflow(ctl) != 0 {
		e = t.getPast(key, hash, i)
	}
	g, c := &h.get, h.c
	if e == nil || e.expiredAt(c) {
		if g.countReads {
			c.count(statMisses, probe())
		}
		var zero V
		return zero, false
	}
	if g.countReads || c.recordReads.Load() {
		c.afterRead(e)
	}
	return loadValue(int(g.vkind), e), true
}

// afterRead counts a hit and records the access for the policy. A hit is
// counted either by the read buffer's slot it takes (Stats sums the
// buffer's tails) or, when the read is not queued, by the stripe's counter:
// the hot path pays one atomic read-modify-write, not two. Get skips it
// when it has neither to count (Options.DisableStats) nor to record.
func (c *cache[K, V]) afterRead(e *entry[K, V]) {
	id := probe()
	s := c.stripe(id)
	if !c.recordReads.Load() {
		if c.reads.Inc(s)%buffer.SampleEvery == 0 && c.reads.Sample(s, id) {
			c.contended()
		}
		return
	}
	switch c.reads.Add(e, s) {
	case buffer.Full:
		c.readAfterPass(e, s)
	case buffer.Contended:
		c.reads.Inc(s)
		c.contended()
	}
}

// readAfterPass queues a read whose stripe s was full after a pass, which
// empties the stripe, rather than drop it. Dropped only if no pass ran
// (another is underway), or if an OnEvict call of the pass panicked, and
// then counted here: the Get found its entry, and Stats counts the hit
// even if the panic goes on to the Get's caller (as a Set is counted).
func (c *cache[K, V]) readAfterPass(e *entry[K, V], s uint64) {
	queued := false
	defer func() {
		if !queued {
			c.reads.Inc(s)
		}
	}()
	queued = c.readerPass() && c.reads.Add(e, s) == buffer.Added
}

// Peek returns the value stored for key like Get, but neither counts it in
// the statistics nor tells the eviction policy about it.
func (h *Cache[K, V]) Peek(key K) (V, bool) {
	c := h.c
	hash := c.hash(key)
	e := c.table(hash).get(key, hash)
	if e == nil || e.expiredAt(c) {
		var zero V
		return zero, false
	}
	return c.load(e), true
}

// GetMany looks up every key like Get. It returns the values found, and the
// keys not found in the order given (duplicates included).
func (h *Cache[K, V]) GetMany(keys []K) (found map[K]V, missing []K) {
	found = make(map[K]V, len(keys))
	for _, k := range keys {
		if v, ok := h.Get(k); ok {
			found[k] = v
		} else {
			missing = append(missing, k)
		}
	}
	return found, missing
}

// Set stores value for key with the default TTL (Options.DefaultTTL),
// replacing any previous value. It reports false, and leaves the cache
// unchanged, when the entry alone weighs more than Options.MaxWeight, or
// when key is not equal to itself (a floating-point NaN, or a struct,
// array or interface holding one), which no Get could find.
// A stored entry may still be evicted at any time, even before Set returns
// to a concurrent reader, if the policy does not admit it.
func (h *Cache[K, V]) Set(key K, value V) bool {
	return h.c.set(key, value, h.c.defaultTTL)
}

// SetWithTTL is like Set with a TTL for this entry: it expires ttl after
// now (spread by Options.TTLJitter). A ttl of zero or less means the entry
// never expires.
func (h *Cache[K, V]) SetWithTTL(key K, value V, ttl time.Duration) bool {
	return h.c.set(key, value, ttl)
}

// SetMany stores every pair of m like Set. It returns the number stored.
func (h *Cache[K, V]) SetMany(m map[K]V) int {
	n := 0
	for k, v := range m {
		if h.c.set(k, v, h.c.defaultTTL) {
			n++
		}
	}
	return n
}

func (c *cache[K, V]) set(key K, value V, ttl time.Duration) bool {
	if c.keyKind == keyOther && key != key {
		// A NaN: its hash is random and it equals nothing, so the entry
		// could be neither found nor taken out of the index again.
		return false
	}
	w := uint32(1)
	if c.weigher != nil {
		w = c.weigher(key, value)
		if uint64(w) > c.maxWeight {
			return false
		}
	}
	hash := c.hash(key)
	var deadline int64
	if ttl > 0 {
		deadline = c.deadline(ttl)
	}
	s := c.segment(hash)
	p := probe()
	if c.vkind != valueInline && deadline == 0 {
		// Replace a word-sized value in place: no allocation, and for the
		// policy it is just an access. (Looking the key up lock-free
		// first, to spare a Set of a new key this lock, measured 0.95 to
		// 1.04 times the throughput on evict-uniform and 0.94 to 0.97 on
		// GetPut's write mixes, 8 alternating pairs: not kept.)
		s.mu.Lock()
		if old := s.get(key, hash); old != nil && old.Tag&tagTimed == 0 && old.Weight == w {
			prev := c.swap(old, value)
			s.mu.Unlock()
			// For the policy the Set is an access, queued like a read's.
			// One counter stands for the Set, the replacement and whether
			// it was queued (Stats takes a queued one off the read
			// buffer's count of hits): one atomic add instead of three.
			// If the stripe is full, the access is queued after the pass
			// the writer then runs, as a reader's is (see afterRead), and
			// counted then.
			r, rec := buffer.Full, c.recordReads.Load()
			if rec {
				r = c.reads.Add(old, c.stripe(p))
			}
			retry := rec && r == buffer.Full
			if !retry {
				c.countInPlace(r, p)
			}
			// Report before running maintenance, which may evict the new
			// value, so that one key's removals stay in order.
			if retry {
				c.reportThenRetry(key, prev, old, p)
			} else if c.onEvict != nil {
				c.onEvict(key, prev, CauseReplaced)
			}
			return true
		}
		s.mu.Unlock()
	}
	e := newEntry[K, V](key, deadline)
	c.init(e, value)
	e.Weight = w
	s.mu.Lock()
	old := s.put(e, hash)
	s.mu.Unlock()

	c.count(statSets, p)
	if deadline != 0 {
		// Deferred: the entry and its record are published even if
		// OnEvict panics below, and the fast clock must run for them.
		defer c.noteTTL()
	}
	// Report the replaced value before maintenance can report the new one
	// (say, evicted at once), so that one key's removals stay in order.
	queue := c.bounded || deadline != 0 || (old != nil && old.Tag&tagTimed != 0)
	if old != nil {
		c.removedThen(old, CauseReplaced, p, queue, event[K, V]{e: e, old: old})
	} else if queue {
		c.afterWrite(event[K, V]{e: e})
	}
	return true
}

// reportThenRetry reports the value that an in-place Set of key replaced
// (prev), then, after a maintenance pass, queues the access to old that
// found its stripe full, and counts the Set: both even if OnEvict panics,
// and the count even if it panics in the pass.
func (c *cache[K, V]) reportThenRetry(key K, prev V, old *entry[K, V], p uint64) {
	defer func() {
		r := buffer.Full
		defer func() { c.countInPlace(r, p) }()
		if c.readerPass() {
			r = c.reads.Add(old, c.stripe(p))
		}
	}()
	if c.onEvict != nil {
		c.onEvict(key, prev, CauseReplaced)
	}
}

// countInPlace counts a Set that replaced a value in place, whose access
// the read buffer took (r is buffer.Added) or not.
func (c *cache[K, V]) countInPlace(r buffer.Result, p uint64) {
	if r == buffer.Added {
		c.count(statInPlaceQueued, p)
	} else {
		c.count(statInPlace, p)
	}
}

// deadline returns the expiry time of an entry written now with ttl.
func (c *cache[K, V]) deadline(ttl time.Duration) int64 {
	c.refreshNow()
	di := int64(ttl) // exact without jitter: a float64 rounds TTLs past 2^53 ns
	if c.jitter > 0 {
		u := c.random
		if u == nil {
			u = rand.Float64
		}
		d := float64(ttl) * (1 + c.jitter*(u()-0.5))
		// Saturate instead of overflowing: a huge TTL means "practically never".
		if d >= math.MaxInt64 {
			di = math.MaxInt64
		} else {
			di = max(int64(d), 1)
		}
	}
	now := c.now() // negative if a Clock reads earlier than the cache's start
	if now > math.MaxInt64-di {
		return math.MaxInt64
	}
	if now+di == 0 {
		return 1 // 0 stands for no deadline
	}
	return now + di
}

// Delete removes key's entry, if any.
func (h *Cache[K, V]) Delete(key K) {
	c := h.c
	hash := c.hash(key)
	s := c.segment(hash)
	s.mu.Lock()
	e := s.remove(key, hash, nil)
	s.mu.Unlock()
	if e == nil {
		return
	}
	c.removedThen(e, CauseDeleted, probe(), c.bounded || e.Tag&tagTimed != 0, event[K, V]{e: e, old: e})
}

// removedThen is removed, then afterWrite(ev) if queue. ev is queued even
// if OnEvict panics: the index has changed, and a policy that never
// learnt of it would keep tracking the old entry and never evict the new
// one.
func (c *cache[K, V]) removedThen(e *entry[K, V], cause Cause, p uint64, queue bool, ev event[K, V]) {
	if queue {
		// Queue the record before the report, which may take any time
		// (or call the cache): a later write of the key waits for it.
		// The maintenance it may call for runs only after the report, so
		// that this goroutine reports e before anything it evicts. If
		// the queue is full, draining it would report other removals
		// first: report, then queue, as before.
		pos, ok := c.writes.PushAt(ev)
		switch {
		case !ok:
			if ev.e != ev.old && ev.e.Tag&tagTimed != 0 {
				// Until its record is queued, after the report, the
				// new entry is in neither the queue nor the wheel:
				// timed must still see it. (Deferred calls run last
				// in first: the count drops once afterWrite returns.)
				c.unqueued.Add(1)
				defer c.unqueued.Add(-1)
			}
			defer c.afterWrite(ev)
		case (pos+1)%uint64(c.writeBatch) == 0:
			defer c.maintain(false)
		}
		if ev.e != ev.old && ev.e.Tag&tagTimed != 0 {
			// The new entry has a TTL: start the fast clock before the
			// report, which may take any time, not after it (a record
			// in the queue keeps it running; if the queue was full, it
			// holds others until the caller's deferred noteTTL).
			c.noteTTL()
		}
	}
	c.removed(e, cause, p)
}

// removed counts and reports an entry that a caller's operation removed
// from the index; an entry that had already expired is reported as expired.
// The clock is read only for an entry with a TTL; if the Clock panics
// then, the entry, which has left the index all the same, is counted and
// reported with cause, and the panic goes on.
func (c *cache[K, V]) removed(e *entry[K, V], cause Cause, p uint64) {
	if e.Tag&tagTimed != 0 {
		cause = c.timedCause(e, cause, p)
	}
	c.countReport(e, cause, p)
}

// timedCause returns the cause to report e with, an entry with a TTL that
// a caller removed for cause: CauseExpired if its deadline has passed. If
// the Clock panics, e is counted and reported with cause as the panic
// unwinds. (Kept out of removed, so that the removal of an entry without
// a TTL, an in-place Set's among them, pays for no deferred call.)
func (c *cache[K, V]) timedCause(e *entry[K, V], cause Cause, p uint64) Cause {
	read := false
	defer func() {
		if !read {
			c.countReport(e, cause, p)
		}
	}()
	expired := e.expiredAt(c)
	read = true
	if expired {
		return CauseExpired
	}
	return cause
}

// countReport is removed's counting and reporting of e with cause.
func (c *cache[K, V]) countReport(e *entry[K, V], cause Cause, p uint64) {
	switch cause {
	case CauseExpired:
		c.count(statExpired, p)
	case CauseDeleted:
		c.count(statDeleted, p)
	case CauseReplaced:
		c.count(statReplaced, p)
	}
	if c.onEvict != nil {
		c.onEvict(e.key, c.load(e), cause)
	}
}

// afterWrite queues ev for the policy. Every writeBatch-th record makes
// its writer run maintenance (unless a pass is underway), so that writers
// share its cost; the background goroutine applies the rest within a
// tick. Counting by the record's position rather than by the queue's
// length spares every writer a read of the queue's head, a cache line
// that the maintenance pass writes at every record it takes.
func (c *cache[K, V]) afterWrite(ev event[K, V]) {
	var pend []removal[K, V]
	timed, counted := ev.old != ev.e && ev.e.Tag&tagTimed != 0, false
	for {
		pos, ok := c.writes.PushAt(ev)
		if ok {
			if timed {
				// Before the maintenance below, whose OnEvict calls may
				// take any time: the fast clock must run meanwhile.
				c.noteTTL()
			}
			if pend != nil {
				c.report(pend)
			}
			if (pos+1)%uint64(c.writeBatch) == 0 {
				c.maintain(false)
			}
			return
		}
		// The queue is full: drain it rather than drop a write. If another
		// goroutine is draining it, yield to it rather than sleep on the
		// lock: a sleeping writer leaves its core idle while the drain
		// runs on the other, and is woken late. The drain's removals are
		// reported once ev is queued: an OnEvict that panicked before
		// would lose it, and the entry, in the index but unknown to the
		// policy, would never be evicted.
		if timed && !counted {
			// Until its record is queued, a new entry with a TTL is in
			// neither the queue nor the wheel, and the drain may take
			// any time: timed must still see it (the count drops once
			// this returns), and the fast clock must run meanwhile,
			// or Gets compare its deadline with a clock that ticks once
			// a second.
			counted = true
			c.unqueued.Add(1)
			defer c.unqueued.Add(-1)
			c.noteTTL()
		}
		if c.mu.TryLock() {
			pend = c.drainFor(ev, pend)
		} else {
			runtime.Gosched()
		}
	}
}

// drainFor is afterWrite's pass over a full queue, which ev waits to
// enter: it runs a pass (the caller holds c.mu, which the pass releases)
// and returns pend with the pass's removals appended. If the pass panics
// (a Clock), ev, which can then never be queued, is applied here instead,
// without a pass (records may be applied out of order: see applyWrite),
// and the removals of afterWrite's earlier passes are reported: otherwise
// the entry would stay in the index unknown to the policy, never evicted,
// and a later write of its key would wait for the record forever.
func (c *cache[K, V]) drainFor(ev event[K, V], pend []removal[K, V]) []removal[K, V] {
	ran := false
	defer func() {
		if !ran {
			c.mu.Lock()
			c.applyWrite(ev)
			c.mu.Unlock()
			c.report(pend)
		}
	}()
	vb, p := c.passLocked()
	ran = true
	return c.dropVictims(vb, append(pend, p...))
}

// maintain runs a maintenance pass, if it gets the lock (always, if block),
// then reports the removals it made, outside the lock. It reports whether
// it ran.
//
// The pass takes its victims out of the index after it has released the
// maintenance lock, so that another writer's pass can run meanwhile: that
// is a miss in the index per victim, a good share of a pass that evicts,
// no longer serialised. Until then a victim can still be read, as if it
// had been evicted a moment later; a caller that replaces or deletes it
// first reports it instead (see drop).
func (c *cache[K, V]) maintain(block bool) bool {
	if block {
		c.mu.Lock()
	} else if !c.mu.TryLock() {
		return false
	}
	vb, pend := c.passLocked()
	pend = c.dropVictims(vb, pend)
	c.report(pend)
	return true
}

// passLocked runs a maintenance pass and takes its victims and pending
// reports; the caller holds c.mu, which passLocked releases, even if a
// Clock panics (the panic goes on to the caller; the victims and reports
// of the interrupted pass stay queued for the next).
func (c *cache[K, V]) passLocked() (*victimBuf[K, V], []removal[K, V]) {
	defer c.mu.Unlock()
	c.maintainLocked()
	vb := c.takeVictims()
	pend := c.pending
	c.pending = nil
	return vb, pend
}

// readerPass runs a pass for a reader whose read buffer stripe is full,
// unless a pass is underway, its victims' removal included, and reports
// whether it ran one (then the stripe is empty): the buffer is
// a sample of the reads, and the reads it drops while a pass runs keep the
// policy's work per read small. Without the victims in that condition,
// releasing the lock before removing them (see maintain) let readers run
// 1.7 times as many passes on a Zipf workload, and apply 1.7 times as many
// reads, which cost more than the removals gained.
func (c *cache[K, V]) readerPass() bool {
	return c.dropping.Load() == 0 && c.maintain(false)
}

// takeVictims returns the pass's victims, leaving an empty buffer in their
// place. The caller holds c.mu.
func (c *cache[K, V]) takeVictims() *victimBuf[K, V] {
	vb := c.victims
	if vb == nil || len(vb.vs) == 0 {
		return nil
	}
	c.victims = nil
	for i := range c.spares {
		if x := c.spares[i].Swap(nil); x != nil {
			c.victims = x
			break
		}
	}
	c.dropping.Add(1)
	return vb
}

// dropVictims takes vb's victims out of the index, counts them and appends
// their reports to pend, then keeps vb for reuse. The caller holds no lock,
// or c.mu (lock order: c.mu, then a segment's).
func (c *cache[K, V]) dropVictims(vb *victimBuf[K, V], pend []removal[K, V]) []removal[K, V] {
	if vb == nil {
		return pend
	}
	// Read the victims' home groups ahead: each is usually a cache miss
	// (a victim was last written or read long ago), and reading them all
	// first lets those misses overlap instead of waiting for each in turn.
	// Measured on the evicting workloads (bench/cmd/throughput, 20
	// alternating pairs): a median of 1.02 times the throughput.
	var warm uint64
	for i := range vb.vs {
		h := c.hash(vb.vs[i].e.key)
		vb.vs[i].h = h
		t := c.table(h)
		warm += t.groups[t.home(h)].ctrl.Load()
	}
	vb.warm = warm
	// Counted once per cause at the end: the counters are shared by every
	// goroutine that drops victims.
	var evicted [numCauses]uint64
	for _, v := range vb.vs {
		e, h := v.e, v.h
		s := c.segment(h)
		s.mu.Lock()
		x := s.remove(e.key, h, e)
		s.mu.Unlock()
		if x == nil {
			// A caller removed or replaced it first and reports it.
			continue
		}
		evicted[v.cause]++
		if c.onEvict != nil {
			pend = append(pend, removal[K, V]{e.key, c.load(e), v.cause})
		}
	}
	for cause, n := range evicted {
		if n > 0 {
			c.evictions[cause].Add(n)
		}
	}
	c.dropping.Add(-1)
	if cap(vb.vs) <= c.maxSpareVictims() {
		clear(vb.vs)
		vb.vs = vb.vs[:0]
		for i := range c.spares {
			if c.spares[i].CompareAndSwap(nil, vb) {
				break
			}
		}
	}
	return pend
}

// maintainFromBackground is maintain(true) for the background goroutine:
// while it runs callbacks, inCallback is set, which lets a Close called from
// such a callback return instead of waiting for this goroutine.
func (c *cache[K, V]) maintainFromBackground() {
	// The clock is this goroutine's to refresh, and it cannot while it
	// waits for the lock, applies writes and evicts (a long pass: an entry
	// as heavy as MaxWeight evicts every other), drops victims (segment
	// locks, which a Set may hold for as long as its segment's table takes
	// to grow) or runs callbacks, however long: readers take the time
	// themselves meanwhile, so that an expired entry is never returned.
	c.selfClock.Add(1)
	defer c.selfClock.Add(-1)
	c.mu.Lock()
	vb, pend := c.passLocked()
	if vb != nil {
		pend = c.dropVictims(vb, pend)
	}
	if len(pend) == 0 || c.onEvict == nil {
		return
	}
	c.setInCallback(true)
	c.report(pend)
	c.setInCallback(false)
}

// lockFromBackground takes c.mu for the background goroutine. The lock
// may be held for long (a Clear of a large cache, another goroutine's
// pass): while the goroutine waits for it, it cannot refresh the cached
// clock, so readers take the time themselves, as during callbacks.
func (c *cache[K, V]) lockFromBackground() {
	if c.mu.TryLock() {
		return
	}
	c.selfClock.Add(1)
	c.mu.Lock()
	c.selfClock.Add(-1)
}

func (c *cache[K, V]) setInCallback(b bool) {
	c.cbMu.Lock()
	c.inCallback = b
	if b && !c.lateClosed {
		select {
		case <-c.stop:
			close(c.lateCallbacks)
			c.lateClosed = true
		default:
		}
	}
	c.cbMu.Unlock()
}

func (c *cache[K, V]) report(pend []removal[K, V]) {
	if c.onEvict == nil {
		return
	}
	i := 0
	defer func() {
		if i < len(pend) {
			// The callback panicked: the entries after this one have
			// left the cache too, and each must still be reported once.
			// The panic goes on once they are.
			c.report(pend[i+1:])
		}
	}()
	for ; i < len(pend); i++ {
		c.onEvict(pend[i].key, pend[i].value, pend[i].cause)
	}
}

// maintainLocked applies buffered reads and writes to the policy, expires
// due entries and evicts down to the bound. The caller holds c.mu.
func (c *cache[K, V]) maintainLocked() {
	if c.bounded {
		c.reads.Drain(c.applyRead)
	}
	// Apply at most one queue's worth of writes, evicting as we go, so that
	// writers refilling the queue meanwhile cannot push the cache further
	// past its bound than the queue holds (plus the entries of writers
	// waiting for room in it: a Set puts its entry in the index first).
	for n := c.writes.Cap(); n > 0; {
		k := c.popWrites(min(n, writeChunk))
		n -= k
		for i := range k {
			c.applyWrite(c.batch[i])
		}
		clear(c.batch[:k])
		if k < writeChunk {
			break
		}
		if c.bounded {
			// Expire what is due before evicting: a policy would
			// otherwise keep expired entries (frequently read, say) and
			// evict the live ones just written for them.
			c.wheel.Advance(c.now(), expireBudget, c.expire)
			c.evict()
		}
	}
	now := c.now()
	// A Clock that steps back would otherwise leave every entry that
	// expires meanwhile in the index until it caught up with the wheel.
	c.wheel.Rewind(now)
	c.backlog = !c.wheel.Advance(now, expireBudget, c.expire)
	if c.bounded {
		c.evict()
		if !c.recordReads.Load() && c.policy.Weight() >= c.maxWeight/2 {
			c.recordReads.Store(true)
		}
	}
}

// writeChunk is the number of write records a maintenance pass takes from
// the queue at a time: it applies them, then evicts down to the bound.
const writeChunk = 64

// popWrites moves up to n write records from the queue to c.batch and
// returns how many. If the policy is a Warmer, it first reads ahead what
// applying them and evicting after them will read (for TinyLFU, the
// sketch blocks of the written entries and of the next victims). Measured
// with bench/cmd/throughput (cachekit alone, runs with and without it
// alternating; evict-uniform and evict-zipf at 100% and 90% reads, 2 and 8
// goroutines): the geometric mean of the eight cells' throughput ratios
// was 1.001 to 1.109 over 6 pairs, median 1.068. The caller holds c.mu.
func (c *cache[K, V]) popWrites(n int) int {
	k := 0
	for ; k < n; k++ {
		ev, ok := c.writes.Pop()
		if !ok {
			break
		}
		c.batch[k] = ev
	}
	if c.warmer == nil || k == 0 {
		return k
	}
	var sum uint64
	for i := range k {
		if ev := c.batch[i]; ev.old != ev.e {
			sum += c.warmer.Warm(&ev.e.Node)
		}
	}
	if c.policy.Weight() >= c.maxWeight {
		sum += c.warmer.WarmVictims(k)
	}
	c.warmSum += sum
	return k
}

// applyRead tells the policy about a read of e, if e is tracked. An entry
// that has left the index meanwhile may still be tracked until its write
// record is applied: the access is harmless, as that record untracks it.
func (c *cache[K, V]) applyRead(e *entry[K, V]) {
	if e.tracked() {
		c.policy.Access(&e.Node)
	}
}

func (c *cache[K, V]) applyWrite(ev event[K, V]) {
	e, old := ev.e, ev.old
	if old == e {
		c.untrack(e)
		return
	}
	if c.bounded {
		// Writers queue their records after leaving the segment lock, so
		// two Sets of one key can arrive in either order. Adding e before
		// its predecessor's record has taken the entry before that out of
		// the policy would count the key twice, and the bound would evict a
		// live key for it. So e waits for old's record; when that arrives,
		// the chain of waiting successors collapses into its newest entry.
		if old != nil && !old.applied() {
			if c.waiting == nil {
				c.waiting = make(map[*entry[K, V]]*entry[K, V])
				c.waitingFor = make(map[*entry[K, V]]*entry[K, V])
			}
			if root, ok := c.waitingFor[old]; ok {
				// old waits itself: e takes its place, and old, replaced
				// before it was ever tracked, is let go (a key set again
				// and again while one record is held up keeps one entry
				// waiting, not all of them).
				delete(c.waitingFor, old)
				old = root
			}
			c.waiting[old] = e
			c.waitingFor[e] = old
			return
		}
		e.Mark |= markApplied
		for len(c.waiting) > 0 {
			next, ok := c.waiting[e]
			if !ok {
				break
			}
			delete(c.waiting, e)
			delete(c.waitingFor, next)
			e = next
			e.Mark |= markApplied
		}
	}
	// An entry whose removal from the index was applied first (untrack
	// marked it gone) must not be tracked: nothing would untrack it. Every
	// removal of an entry that has a write record is applied under c.mu:
	// by its own record (Delete), its successor's (Set), drop or Clear. One
	// removed before this record but applied after it is tracked for that
	// short while, then untracked by its removal's record.
	switch {
	case old != nil && old.tracked() && !e.gone():
		old.setTracked(false)
		c.deschedule(old)
		if c.bounded {
			c.policy.Replace(&old.Node, &e.Node)
		}
		c.trackTimer(e)
	default:
		if old != nil {
			c.untrack(old)
		}
		if !e.tracked() && !e.gone() {
			if c.bounded {
				c.policy.Add(&e.Node)
			}
			c.trackTimer(e)
		}
	}
}

func (c *cache[K, V]) trackTimer(e *entry[K, V]) {
	e.setTracked(true)
	if t := e.timed(); t != nil {
		c.wheel.Schedule(&t.timer)
	}
}

// deschedule takes e off the timer wheel, if it is on it.
func (c *cache[K, V]) deschedule(e *entry[K, V]) {
	if t := e.timed(); t != nil {
		c.wheel.Deschedule(&t.timer)
	}
}

// untrack takes e, which has left the index, off the policy and the wheel;
// if its write record has not made it known to them yet, it marks e gone so
// that the record will not. The caller holds c.mu.
func (c *cache[K, V]) untrack(e *entry[K, V]) {
	if !e.tracked() {
		e.Mark |= markGone
		return
	}
	e.setTracked(false)
	c.deschedule(e)
	if c.bounded {
		c.policy.Remove(&e.Node)
	}
}

// expire is the wheel's callback for a due timer. The caller holds c.mu.
func (c *cache[K, V]) expire(t *wheel.Timer) {
	e := timerEntry[K, V](t)
	if !e.tracked() {
		return
	}
	e.setTracked(false)
	if c.bounded {
		c.policy.Remove(&e.Node)
	}
	c.drop(e, CauseExpired)
}

// evict removes the policy's victims until the bound holds. The caller
// holds c.mu.
func (c *cache[K, V]) evict() {
	if c.policy.Weight() <= c.policy.Max() {
		return // nothing to evict (Evict would return nil): spare the Clock a call
	}
	// Read once, before the policy lets any entry go: a Clock that
	// panics then loses no victim (untracked, it would stay in the index
	// for good).
	now := c.now()
	for {
		n := c.policy.Evict()
		if n == nil {
			return
		}
		e := toEntry[K, V](n)
		e.setTracked(false)
		c.deschedule(e)
		cause := CauseCapacity
		if e.expired(now) {
			cause = CauseExpired
		}
		c.drop(e, cause)
	}
}

// drop queues e, which the policy and the wheel have let go, for removal
// from the index at the end of the pass (dropVictims): if it is still
// there then, it is counted and reported with cause; if a caller has
// removed or replaced it meanwhile, the caller reports it. The caller
// holds c.mu.
func (c *cache[K, V]) drop(e *entry[K, V], cause Cause) {
	if c.victims == nil {
		c.victims = new(victimBuf[K, V])
	}
	c.victims.vs = append(c.victims.vs, victim[K, V]{e: e, cause: cause})
}

// Len returns the number of entries in the index. It may include entries
// that have expired but are not reclaimed yet, and, for a short while after
// concurrent writes, entries the policy is about to evict.
func (h *Cache[K, V]) Len() int {
	n := int64(0)
	for i := range h.c.segs {
		n += h.c.segs[i].live.Load()
	}
	return int(n)
}

// Clear removes every entry, reporting each with CauseCleared, except
// those it finds already expired (CauseExpired) or due for eviction
// (CauseCapacity: pending writes put the cache over its bound, which its
// first maintenance pass evicts). Writes that run concurrently with Clear
// may or may not survive it.
func (h *Cache[K, V]) Clear() {
	c := h.c
	c.mu.Lock()
	c.report(c.clearLocked())
}

// clearLocked is Clear's work under c.mu, which it releases even if a
// Clock panics in the maintenance pass that comes first.
func (c *cache[K, V]) clearLocked() []removal[K, V] {
	defer c.mu.Unlock()
	c.maintainLocked()
	c.pending = c.dropVictims(c.takeVictims(), c.pending)
	// The pass expires a bounded number of entries: those it left (a
	// backlog) are reported as expired too.
	now := c.now()
	for i := range c.segs {
		s := &c.segs[i]
		s.mu.Lock()
		s.clear(func(e *entry[K, V]) {
			c.untrack(e)
			cause := CauseCleared
			if e.expired(now) {
				cause = CauseExpired
			}
			c.evictions[cause].Add(1)
			if c.onEvict != nil {
				c.pending = append(c.pending, removal[K, V]{e.key, c.load(e), cause})
			}
		})
		s.mu.Unlock()
	}
	pend := c.pending
	c.pending = nil
	return pend
}

// All returns an iterator over the cache's live entries. It takes a
// snapshot of one index segment at a time, so every pair it yields was in
// the cache, unexpired, at some moment during the iteration; a key is
// yielded at most once; entries written or removed concurrently may or may
// not be seen. The iteration holds no lock while it calls yield, so the
// loop body may use the cache. Iterating does not count as access.
func (h *Cache[K, V]) All() iter.Seq2[K, V] {
	c := h.c
	return func(yield func(K, V) bool) {
		var buf []*entry[K, V]
		for i := range c.segs {
			s := &c.segs[i]
			s.mu.Lock()
			buf = s.snapshot(buf[:0])
			s.mu.Unlock()
			now := c.now()
			for j, e := range buf {
				buf[j] = nil
				if e.expired(now) {
					continue
				}
				if !yield(e.key, c.load(e)) {
					return
				}
			}
		}
	}
}
