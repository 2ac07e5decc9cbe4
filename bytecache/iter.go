package bytecache

import (
	"iter"
	"time"
)

// Entry is a live entry seen by All.
type Entry struct {
	Key     []byte
	Value   []byte
	Expires time.Time // zero: never expires
}

// iterBatch is how many bytes of entries All copies per lock acquisition.
const iterBatch = 64 << 10

// All returns an iterator over the live entries, shard by shard, oldest
// first within a shard. The slices of an Entry are valid only during the
// call to yield; copy them to keep them. Entries are live at the time the
// iteration starts (Options.Now is read once): a slow yield may see an
// entry that has expired since.
//
// All copies a batch of entries under a shard's lock and calls yield
// without any lock held, so yield may use the cache. It is not a snapshot:
// an entry present for the whole iteration is seen once, but an entry set,
// deleted or evicted meanwhile may or may not be seen, and a key set again
// meanwhile may be seen once (old or new value), twice (both), or, if it
// was set again before the iteration reached it, not at all: each shard's
// walk stops at the entries that were there when the walk reached the
// shard, so the iteration ends even if yield sets every entry it sees
// again.
func (c *Cache) All() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		var buf []byte
		now := c.nowNano()
		c.walk(iterBatch, 0, now, &buf, func(b []byte, _ int) bool {
			for len(b) > 0 {
				h, _ := decodeHeader(b)
				e := Entry{
					Key:   b[h.hdrLen : h.hdrLen+h.keyLen : h.hdrLen+h.keyLen],
					Value: b[h.hdrLen+h.keyLen : h.size() : h.size()],
				}
				if h.hasExp {
					e.Expires = time.Unix(0, h.exp)
				}
				if !yield(e) {
					return false
				}
				b = b[h.size():]
			}
			return true
		})
	}
}

// walk collects the live entries unexpired at now in batches of about
// batch bytes, shard by shard, and calls fn with each batch (raw entries)
// and its number of entries, without a lock held. It stops when fn returns
// false. In each shard it goes on past the entries there when it began by
// at most beyond bytes of entries written meanwhile.
func (c *Cache) walk(batch int, beyond uint64, now int64, buf *[]byte, fn func(b []byte, n int) bool) {
	for i := range c.shards {
		sh := &c.shards[i]
		var pos, end uint64
		for done, first := false, true; !done; first = false {
			var n int
			sh.mu.RLock()
			if first {
				// Entries written meanwhile (fn itself may Set) are
				// appended at the head: chasing it without a bound would
				// let a busy writer, or an fn that sets every entry it
				// sees again, keep the walk going for ever.
				end = sh.st.head + beyond
			}
			*buf, n, pos, done = sh.st.collect((*buf)[:0], pos, end, batch, now)
			sh.mu.RUnlock()
			if n > 0 && !fn(*buf, n) {
				return
			}
		}
	}
}
