// Package bytecache provides Cache, a byte cache for tens of millions of
// entries that costs the garbage collector almost nothing and holds a
// precise byte budget.
//
// # When to use it
//
// Use a Cache when the entries are many (millions) and their values are
// bytes or can be encoded to bytes cheaply (Typed with a Codec): a Go map of
// millions of pointer-holding entries makes every garbage collection mark
// them all, which a Cache avoids. For fewer entries, values that are
// expensive to encode, or an eviction policy better than FIFO, use the
// cachekit.Cache of the parent package.
//
// # Design
//
// A cache is split into Shards, each with its own lock. A shard stores its
// entries one after another in a ring of MaxBytes/Shards bytes, made of
// chunks allocated when the ring first reaches them. When the ring is full,
// writing advances over the oldest entries, which are evicted: eviction is
// first in, first out, by the time of the last Set. Setting a key again
// writes a new entry at the head; the old one becomes dead space, reclaimed
// when the ring comes round to it.
//
// On Linux, macOS and the BSDs the chunks (1 MiB) are mapped outside the
// Go heap with mmap: the garbage collector neither scans nor counts them,
// so a large cache does not raise the heap's size or its collection goal,
// and the kernel backs a chunk's pages only as they are first written.
// Elsewhere, and in race-detector builds, the chunks (64 KiB) are objects
// without pointers on the Go heap, which the collector does not scan either.
// Close (or Clear) releases them; a cache dropped without Close releases
// its mapped chunks when the garbage collector finds it unreachable.
//
// Each shard's index is a single array of uint64 slots (open addressing,
// linear probing), each holding 32 bits of the key's hash and the entry's
// offset in the ring. The number of heap objects therefore depends on the
// budget (one per chunk at most) and on Shards, never on the number of
// entries. Lookups compare the stored key with the key sought in full, so
// a hash collision never returns another key's value, and colliding keys
// coexist; the hash (hash/maphash) has a random seed per cache.
//
// # Memory
//
// The chunks never add up to more than MaxBytes (rounded down to a multiple
// of Shards); Stats.ChunkBytes reports them (mapped chunks are rounded up
// to the page size by the kernel, which adds less than a page per shard).
// An entry takes its key and value plus a header of 2 to 8 bytes, and 8
// more if it has a TTL. The indexes come on top: 8 bytes per slot, with
// between 4/3 and 8/3 slots per live entry as entries are added (a table
// doubles when three quarters full), so 11 to 22 bytes per live entry, and
// at most 8 slots (64 bytes) per live entry as entries are removed (a
// table halves when an eighth full) (Stats.IndexBytes). Those ratios hold
// above a table's smallest size, 16 slots (128 bytes): a shard that has
// held an entry keeps at least that much until Clear, even with one live
// entry or none. While a table doubles or halves, the old one exists too.
// The fixed overhead beyond that is about 330 bytes per shard plus 25
// bytes per chunk.
//
// # Limits
//
// Keys are at most 65535 bytes (Options.MaxKeyBytes). An entry (header, key
// and value) may fill a whole shard, so the largest value is MaxBytes/Shards
// minus 16 bytes by default (Options.MaxValueBytes); larger values are
// refused with ErrValueTooLarge. A large entry evicts everything it
// overwrites in its shard.
//
// # Expiry
//
// Entries may have a TTL (Options.DefaultTTL, or per Set). An entry expires
// at the instant Set's time plus its TTL and is never returned from then
// on, except by an All or SaveTo begun before: they read the clock once,
// when they start, and judge every entry by that time. Expired entries are
// removed by a Get that finds them, by Delete, by Len, or when the ring
// comes round to them; there is no background goroutine. Has reports an
// expired entry as absent without removing it (nor counting an
// expiration in Stats).
//
// # Concurrency and ownership
//
// Every method is safe for concurrent use. Reads take a shard's read lock,
// writes its write lock. Set copies the key and value, so the caller may
// modify them afterwards; Get appends the value to the caller's slice, so
// the result never aliases the cache's memory. All and SaveTo copy entries
// in batches and call back or write without a lock held.
//
// # Snapshots
//
// SaveTo and LoadFrom (and SaveToFile and LoadFromFile) write and read a
// versioned snapshot with a CRC-32C per block and absolute expiry times, so
// a restarted process can start warm. A corrupt or truncated snapshot is
// refused with an error wrapping ErrCorrupt and the cache is left as it
// was.
package bytecache
