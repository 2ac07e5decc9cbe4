// Package node defines the bookkeeping record of the cache's eviction
// policies, and an intrusive doubly linked list over it.
//
// A Node is embedded as the first field of the cache's typed entry, so a
// policy can work on *Node without knowing the key and value types. It is
// kept small on purpose: it is part of every entry, and the policies'
// miniature simulations hold many of them. Nothing in this package is safe
// for concurrent use: the policy's fields are owned by whoever holds the
// cache's maintenance lock (or by the single goroutine of a simulation);
// Tag and Mark follow the owner's own rules, given below.
package node

import "unsafe"

// Node is the per-entry record of a policy. It holds no key and no hash:
// a policy that needs a node's key hash (for a frequency sketch, say) asks
// the owner's Hasher, which recomputes it from the key of the entry that
// embeds the node. Storing the hash would cost 8 bytes in every entry,
// and recomputing it costs a few nanoseconds in the policy's maintenance,
// off the read path.
type Node struct {
	prev, next *Node // policy queue links, owned by List

	// Weight is the entry's weight (1 for caches bounded by count).
	Weight uint32
	// Queue tells which of a policy's queues holds the node; 0 means none.
	Queue uint8
	// Flags is free for a policy's per-entry bits.
	Flags uint8
	// Tag is free for the node's owner (the cache, not the policy): the
	// owner sets it before it shares the node and never changes it after,
	// so it may be read concurrently with the policy's work on the node.
	Tag uint8
	// Mark is free for the node's owner, under the owner's maintenance
	// lock; policies never touch it.
	Mark uint8
}

// Hasher returns the 64-bit hash of the key of the entry that embeds n.
// It must return the same value for a node for as long as a policy tracks
// it, and policies call it under the same lock as their other methods.
type Hasher func(n *Node) uint64

// Keyed is a Node with its key hash beside it, for owners that have no
// typed entry to recompute a hash from (simulations and tests): policies
// given KeyedHash as their Hasher must only ever see the Node of a Keyed.
type Keyed struct {
	Node // first field: KeyedHash depends on it
	Hash uint64
}

// NewKeyed returns the Node of a new Keyed with hash h and weight w.
func NewKeyed(h uint64, w uint32) *Node {
	k := &Keyed{Node: Node{Weight: w}, Hash: h}
	return &k.Node
}

// KeyedHash is the Hasher of nodes that are the first field of a Keyed.
func KeyedHash(n *Node) uint64 { return (*Keyed)(unsafe.Pointer(n)).Hash }

// Next returns the node after n in its list, or nil.
func (n *Node) Next() *Node { return n.next }

// Prev returns the node before n in its list, or nil.
func (n *Node) Prev() *Node { return n.prev }

// List is an intrusive doubly linked list of nodes, front = oldest.
// The zero value is an empty list. A node belongs to at most one List.
type List struct {
	head, tail *Node
	len        int
	weight     uint64
	// A walk (see StartWalk): walking says one is underway, cursor is the
	// next node it visits (nil: none left for now).
	cursor  *Node
	walking bool
}

// Len returns the number of nodes in the list.
func (l *List) Len() int { return l.len }

// Weight returns the sum of the weights of the nodes in the list.
func (l *List) Weight() uint64 { return l.weight }

// Front returns the first (oldest) node, or nil.
func (l *List) Front() *Node { return l.head }

// Back returns the last (newest) node, or nil.
func (l *List) Back() *Node { return l.tail }

// PushBack appends n, which must not be in any list.
func (l *List) PushBack(n *Node) {
	n.prev, n.next = l.tail, nil
	if l.tail == nil {
		l.head = n
	} else {
		l.tail.next = n
	}
	l.tail = n
	l.len++
	l.weight += uint64(n.Weight)
	if l.walking && l.cursor == nil {
		l.cursor = n
	}
}

// PushFront prepends n, which must not be in any list.
func (l *List) PushFront(n *Node) {
	n.prev, n.next = nil, l.head
	if l.head == nil {
		l.tail = n
	} else {
		l.head.prev = n
	}
	l.head = n
	l.len++
	l.weight += uint64(n.Weight)
	if l.walking {
		l.cursor = n // the walk visits n, and again the nodes it passed
	}
}

// Remove unlinks n, which must be in l.
func (l *List) Remove(n *Node) {
	if l.cursor == n {
		l.cursor = n.next
	}
	if n.prev == nil {
		l.head = n.next
	} else {
		n.prev.next = n.next
	}
	if n.next == nil {
		l.tail = n.prev
	} else {
		n.next.prev = n.prev
	}
	n.prev, n.next = nil, nil
	l.len--
	l.weight -= uint64(n.Weight)
}

// MoveToBack moves n, which must be in l, to the back.
func (l *List) MoveToBack(n *Node) {
	if l.tail == n {
		return
	}
	l.Remove(n)
	l.PushBack(n)
}

// Replace puts n in old's place; old must be in l and n in no list.
// The list's weight follows the change from old's weight to n's.
//
// During a walk n counts as visited if old was: callers replace a node by
// one that stands for the same key.
func (l *List) Replace(old, n *Node) {
	if l.cursor == old {
		l.cursor = n
	}
	n.prev, n.next = old.prev, old.next
	if old.prev == nil {
		l.head = n
	} else {
		old.prev.next = n
	}
	if old.next == nil {
		l.tail = n
	} else {
		old.next.prev = n
	}
	old.prev, old.next = nil, nil
	l.weight = l.weight - uint64(old.Weight) + uint64(n.Weight)
}

// Clear empties the list without touching the nodes' links. It ends a
// walk.
func (l *List) Clear() { *l = List{} }

// StartWalk starts a walk over the list: WalkNext returns every node in
// the list, front to back, and the nodes that enter the list or move to
// its back during the walk (Replace aside), each at least once. A node may
// be returned more than once (after it moved to the back, say). The walk
// lasts until EndWalk, so that a node pushed after WalkNext returned nil
// is still visited: a caller walking several lists ends the walks once
// every list is exhausted at the same time.
func (l *List) StartWalk() { l.cursor, l.walking = l.head, true }

// WalkNext returns the next node of the walk, or nil if every node has
// been visited for now.
func (l *List) WalkNext() *Node {
	n := l.cursor
	if n != nil {
		l.cursor = n.next
	}
	return n
}

// EndWalk ends a walk.
func (l *List) EndWalk() { l.cursor, l.walking = nil, false }

// Walking reports whether a walk is underway.
func (l *List) Walking() bool { return l.walking }
