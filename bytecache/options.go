package bytecache

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"time"
)

// Options configures a Cache. The zero value is a valid configuration: a
// 32 MiB cache whose entries never expire.
type Options struct {
	// MaxBytes is the budget for entry storage: the chunks that hold keys,
	// values and entry headers never add up to more than MaxBytes. It is
	// split evenly between the shards. The index comes on top (see the
	// package documentation). Negative values are invalid. Default 32 MiB.
	MaxBytes int64

	// Shards is the number of shards, each with its own lock, ring and
	// index; a power of two, at most 65536. A shard's share of MaxBytes
	// must be between 1 KiB and 1 GiB; it also bounds the largest entry.
	// Default 0: 64 per GOMAXPROCS rounded up to a power of two, at most
	// 1024, halved while a shard would get less than 256 KiB, and doubled
	// while a shard would get more than 1 GiB.
	Shards int

	// DefaultTTL is the time to live of entries that Set stores with
	// ttl == 0. Zero means such entries never expire. Negative values are
	// invalid. Default 0.
	DefaultTTL time.Duration

	// MaxKeyBytes is the longest key Set accepts; longer keys get
	// ErrKeyTooLarge. At most 65535. Default 65535.
	MaxKeyBytes int

	// MaxValueBytes is the longest value Set accepts; longer values get
	// ErrValueTooLarge. It may not exceed a shard's share of MaxBytes minus
	// 16 bytes (the largest entry header). A value with its key and header
	// must also fit in a shard, so a value of up to MaxValueBytes-len(key)
	// is always accepted. Default: that largest value, MaxBytes/Shards-16.
	MaxValueBytes int

	// Now is the clock for expiry; it must be safe for concurrent use. It
	// is read only where a TTL is involved: by Set when the entry gets one
	// or when it evicts one that has one, by Get, Has, Delete and Len when
	// they find an entry with one, and once per call of All, SaveTo and
	// LoadFrom. Default time.Now.
	Now func() time.Time

	// chunkShift overrides the chunk size (tests). Default 0: 1 MiB off
	// the heap, 64 KiB on the heap.
	chunkShift uint32
	// heap keeps chunks on the Go heap where they could be mapped outside
	// (tests).
	heap bool
}

// ErrInvalidOptions is wrapped by every error that New returns.
var ErrInvalidOptions = errors.New("bytecache: invalid options")

const (
	defaultMaxBytes    = 32 << 20
	maxShards          = 1 << 16
	defaultShardTarget = 256 << 10
)

// config is a validated Options with the defaults filled in.
type config struct {
	maxBytes   int64
	shards     int
	ringSize   uint32
	chunkShift uint32
	heap       bool
	defaultTTL time.Duration
	maxKey     int
	maxValue   int
	now        func() time.Time
}

func (o *Options) config() (config, error) {
	bad := func(format string, args ...any) (config, error) {
		return config{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
	}
	cf := config{
		maxBytes:   o.MaxBytes,
		shards:     o.Shards,
		chunkShift: o.chunkShift,
		heap:       o.heap,
		defaultTTL: o.DefaultTTL,
		maxKey:     o.MaxKeyBytes,
		maxValue:   o.MaxValueBytes,
		now:        o.Now,
	}
	switch {
	case cf.maxBytes < 0:
		return bad("MaxBytes %d is negative", cf.maxBytes)
	case cf.maxBytes == 0:
		cf.maxBytes = defaultMaxBytes
	}
	switch {
	case cf.shards < 0 || cf.shards > maxShards || cf.shards&(cf.shards-1) != 0:
		return bad("Shards %d is not a power of two between 1 and %d", cf.shards, maxShards)
	case cf.shards == 0:
		cf.shards = defaultShards(cf.maxBytes, runtime.GOMAXPROCS(0))
	}
	ring := cf.maxBytes / int64(cf.shards)
	if ring < minRingSize || ring > maxRingSize {
		return bad("MaxBytes/Shards is %d bytes; a shard needs between %d and %d", ring, minRingSize, maxRingSize)
	}
	cf.ringSize = uint32(ring)
	if cf.chunkShift == 0 {
		cf.chunkShift = heapChunkShift
		if offHeapSupported && !cf.heap {
			cf.chunkShift = offHeapChunkShift
		}
	}
	if cf.defaultTTL < 0 {
		return bad("DefaultTTL %v is negative", cf.defaultTTL)
	}
	switch {
	case cf.maxKey < 0 || cf.maxKey > maxKeyLimit:
		return bad("MaxKeyBytes %d is not between 0 and %d", cf.maxKey, maxKeyLimit)
	case cf.maxKey == 0:
		cf.maxKey = maxKeyLimit
	}
	largest := int(ring) - maxHeaderLen
	switch {
	case cf.maxValue < 0 || cf.maxValue > largest:
		return bad("MaxValueBytes %d is not between 0 and %d (a shard's share of MaxBytes minus %d)", cf.maxValue, largest, maxHeaderLen)
	case cf.maxValue == 0:
		cf.maxValue = largest
	}
	if cf.now == nil {
		cf.now = time.Now
	}
	return cf, nil
}

// defaultShards picks the number of shards for a budget and a number of
// processors: enough that goroutines rarely wait for one another, few
// enough that each shard holds large values. A reader that finds its
// shard write-locked parks, which costs far more than the lookup: with 16
// shards per processor, 2 goroutines on 2 cores doing 10% writes took 640
// ns/op against 410 ns/op with reads only (the articles' benchmark, 1M
// entries); with 64 per processor, 480 ns/op.
func defaultShards(maxBytes int64, procs int) int {
	n := 1 << bits.Len(uint(max(1, 64*procs)-1))
	n = min(n, 1024)
	for n > 1 && maxBytes/int64(n) < defaultShardTarget {
		n /= 2
	}
	for n < maxShards && maxBytes/int64(n) > maxRingSize {
		n *= 2
	}
	return n
}
