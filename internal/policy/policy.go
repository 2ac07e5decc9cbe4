// Package policy holds the cache's eviction policies. Each one is a plain,
// non-concurrent struct: the cache serialises every call under its
// maintenance lock, and a simulation drives it from one goroutine.
package policy

import "github.com/cachekit/cachekit/internal/node"

// Policy decides which entries to keep. It tracks nodes that the owner
// tells it about and names victims when the tracked weight exceeds its
// maximum; it never frees anything itself.
//
// A node is tracked from Add (or Replace, as the new node) until Remove,
// until it is replaced, or until Evict returns it. The owner must not call
// Access, Remove or Replace(old, …) for a node that is not tracked.
type Policy interface {
	// Add starts tracking n; n.Weight is counted from now on.
	Add(n *node.Node)
	// Access records a read of n.
	Access(n *node.Node)
	// Remove stops tracking n (deleted or expired by the owner).
	Remove(n *node.Node)
	// Replace stops tracking old and tracks n in its place, as a write to
	// the same key (n.Weight may differ from old.Weight).
	Replace(old, n *node.Node)
	// Evict stops tracking and returns one node to evict while the
	// tracked weight exceeds the maximum, or returns nil once it does not.
	// Within the maximum it changes nothing, so an owner may skip it then
	// (the cache does). The owner adds before it evicts; every policy but
	// TinyLFU (whose admission filter may refuse it) chooses its victims
	// among the nodes other than the one added last, as if it had evicted
	// before inserting that one, and returns that one only once it is
	// alone (it weighs more than the maximum).
	Evict() *node.Node
	// Len returns the number of tracked nodes.
	Len() int
	// Weight returns the tracked weight.
	Weight() uint64
	// Max returns the maximum weight.
	Max() uint64
}

// Warmer is implemented by policies that can read ahead the memory their
// next operations will need, so that a caller about to apply a batch can
// have the processor fetch it all at once: the reads are independent, and
// their cache misses overlap, where applying the batch one operation at a
// time would wait for each in turn. Neither method changes the policy;
// each returns a value computed from what it read, which the caller keeps
// (so that the reads are not optimised away) and otherwise ignores.
type Warmer interface {
	// Warm reads what Add(n) will read.
	Warm(n *node.Node) uint64
	// WarmVictims reads what choosing the next k victims will read.
	WarmVictims(k int) uint64
}
