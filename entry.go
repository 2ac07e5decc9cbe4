package cachekit

import (
	"sync/atomic"
	"unsafe"

	"github.com/cachekit/cachekit/internal/node"
)

// entry is one key and value. Key, hash, weight and deadline never change
// once the entry is published in the index; the value changes in place only
// for word-sized values (value.go), otherwise a Set of an existing key
// publishes a new entry in its place. The embedded node's links belong to
// the maintenance lock; removed is set under the segment lock when the entry
// leaves the index, and read by maintenance.
type entry[K comparable, V any] struct {
	node.Node // first field: toEntry depends on it
	key       K
	value     V             // see value.go for which of value and bits holds it
	bits      atomic.Uint64 // the value's bits, for word-sized pointer-free values
	removed   atomic.Bool
	tracked   bool // known to the policy and the wheel; guarded by cache.mu
	applied   bool // a bounded cache has applied its write record; guarded by cache.mu
}

// toEntry returns the entry that embeds n. Every *node.Node that the cache
// hands to its policy or wheel is the first field of an entry[K, V], so the
// conversion is to the allocation's own type.
func toEntry[K comparable, V any](n *node.Node) *entry[K, V] {
	return (*entry[K, V])(unsafe.Pointer(n))
}

// expired reports whether e has expired at now.
func (e *entry[K, V]) expired(now int64) bool {
	return e.Deadline != 0 && e.Deadline <= now
}
