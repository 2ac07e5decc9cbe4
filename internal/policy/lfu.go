package policy

import "github.com/cachekit/cachekit/internal/node"

func init() {
	Register("lfu", "LFU with dynamic aging (LFU-DA): evicts the lowest count plus the age, the key of the last victim", func(c Config) (Policy, error) {
		if err := noParam("lfu", c); err != nil {
			return nil, err
		}
		return NewLFU(c.Max), nil
	})
}

// qHeap is the node.Queue value of the policies that keep their nodes in
// a heapQueue (LFU, LRFU, DLFU), or in Random's slice of nodes.
const qHeap = 1

// LFU is least frequently used with dynamic aging (LFU-DA: Arlitt,
// Cherkasova, Dilley, Friedman and Jin, "Evaluating Content Management
// Techniques for Web Proxy Caches", 2000). Each entry counts its
// references (the add, then every read and write) and has the key
// count + L, where L, the cache's age, is the key of the last evicted
// entry; the entry with the lowest key goes first, the least recently
// used first among equal keys. An entry's key is computed with the age at
// its last reference, so entries that stop being used fall behind new ones
// as the age rises: past popularity does not pin an entry forever, without
// ever touching the entries that are not referenced. Weights do not change
// the order (no size-aware GDSF). Every operation is O(log n) on a binary
// heap.
//
// LFU-DA evicts before it inserts: the age is the key of the victim
// evicted for the insertion, and the new entry's key is computed with it.
// Here the owner adds first, so the entry being inserted is kept out of
// the victims' choice until the weight is within the maximum (it goes only
// if it alone weighs more than the maximum, leaving the age as it is), and
// is keyed then, with the age its eviction left.
//
// LFU is not safe for concurrent use.
type LFU struct {
	heapSpace
	age   float64 // L: the key of the last victim
	clock uint64  // references so far, the tie-breaker
}

// NewLFU returns an LFU-DA policy for at most max weight.
func NewLFU(max uint64) *LFU {
	p := &LFU{heapSpace: newHeapSpace(max)}
	p.rekey = func(e *heapItem) { e.key = p.age + float64(e.count) }
	return p
}

// Age returns the current age L (for tests and statistics).
func (p *LFU) Age() float64 { return p.age }

// Add implements Policy.
func (p *LFU) Add(n *node.Node) {
	p.clock++
	p.add(n, p.age+1, p.clock, 1)
}

// Access implements Policy.
func (p *LFU) Access(n *node.Node) {
	p.clock++
	i := p.heap.index(n)
	e := p.heap.items[i]
	e.count++
	e.key = p.age + float64(e.count)
	e.seq = p.clock
	p.heap.fix(i)
}

// Replace implements Policy: n inherits old's count, and the write counts
// as a reference.
func (p *LFU) Replace(old, n *node.Node) {
	p.swap(old, n)
	p.Access(n)
	p.settle()
}

// Evict implements Policy.
func (p *LFU) Evict() *node.Node {
	n, key, fresh := p.popOver()
	if n != nil && !fresh {
		p.age = key
	}
	p.settle()
	return n
}

// heapSpace is what the heap-ordered policies (LFU, LRFU, DLFU) share:
// the heap of their nodes, and the nodes' weight against the bound.
//
// The owner adds before it evicts, where these policies evict before they
// insert: the entry being inserted (the one added last, until the weight is
// within the maximum) is pinned behind every other in the heap, so that it
// is evicted only once it is alone (it weighs more than the maximum). Its
// priority is kept up to date meanwhile; rekey, if set, recomputes it when
// the insertion ends (LFU-DA's age may have risen).
type heapSpace struct {
	heap   heapQueue
	fresh  *heapItem // the entry being inserted, pinned; nil if none
	rekey  func(e *heapItem)
	max    uint64
	weight uint64
}

// newHeapSpace returns an empty heapSpace for at most limit weight (at
// least 1).
func newHeapSpace(limit uint64) heapSpace { return heapSpace{max: max(limit, 1)} }

// Len implements Policy.
func (s *heapSpace) Len() int { return s.heap.len() }

// Weight implements Policy.
func (s *heapSpace) Weight() uint64 { return s.weight }

// Max implements Policy.
func (s *heapSpace) Max() uint64 { return s.max }

// add starts tracking n, the entry being inserted, with the given
// priority. An insertion still under way ends: its entry is one of the
// others now.
func (s *heapSpace) add(n *node.Node, key float64, seq, count uint64) {
	if s.fresh != nil {
		s.admit()
	}
	s.weight += uint64(n.Weight)
	s.fresh = s.heap.push(n, key, seq, count, true)
	s.settle()
}

// settle ends the insertion once the weight is within the maximum, as
// Evict does when it returns nil (an owner may skip that call).
func (s *heapSpace) settle() {
	if s.fresh != nil && s.weight <= s.max {
		s.admit()
	}
}

// admit ends the insertion: its entry takes its place among the others.
func (s *heapSpace) admit() {
	e := s.fresh
	s.fresh = nil
	e.pinned = false
	if s.rekey != nil {
		s.rekey(e)
	}
	s.heap.up(e.pos)
}

// Remove implements Policy.
func (s *heapSpace) Remove(n *node.Node) {
	i := s.heap.index(n)
	if s.heap.items[i] == s.fresh {
		s.fresh = nil
	}
	s.heap.remove(i)
	s.weight -= uint64(n.Weight)
	s.settle()
}

// swap puts n in old's place, with old's priority (for Replace, which
// then counts the write as a reference and settles).
func (s *heapSpace) swap(old, n *node.Node) {
	s.heap.replace(old, n)
	s.weight = s.weight - uint64(old.Weight) + uint64(n.Weight)
}

// popOver removes the first node of the heap and returns it with its key,
// and whether it was the entry being inserted, if the weight is over the
// bound; otherwise it returns nil. The caller settles.
func (s *heapSpace) popOver() (n *node.Node, key float64, fresh bool) {
	if s.weight <= s.max {
		return nil, 0, false
	}
	if s.heap.items[0] == s.fresh {
		s.fresh, fresh = nil, true
	}
	e := s.heap.remove(0)
	s.weight -= uint64(e.n.Weight)
	return e.n, e.key, fresh
}

// heapItem is a tracked node with its priority in a heapQueue.
type heapItem struct {
	n      *node.Node
	key    float64 // lower keys are evicted first
	seq    uint64  // breaks ties: the lower (older) one is evicted first
	count  uint64  // LFU's reference count; unused by the others
	pos    int     // the item's index in heapQueue.items
	pinned bool    // behind every other item (heapSpace.fresh)
}

// heapQueue is a binary min-heap of nodes, shared by LFU, LRFU and DLFU.
// A node has no room for its position in the heap, so the heap keeps its
// own record per node: an item, found from the node through a map, that
// holds the node's priority and its position. Sifting moves item pointers
// and writes the moved items' positions, never the map. A tracked node's
// Queue is qHeap. Items of nodes that leave are kept for reuse, so in
// steady state nothing is allocated.
type heapQueue struct {
	items []*heapItem
	of    map[*node.Node]*heapItem
	free  []*heapItem
}

func (h *heapQueue) len() int { return len(h.items) }

// index returns n's position in the heap.
func (h *heapQueue) index(n *node.Node) int { return h.of[n].pos }

func (a *heapItem) before(b *heapItem) bool {
	if a.pinned != b.pinned {
		return b.pinned
	}
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// up moves item i toward the root until its parent goes before it. The
// item is lifted out and the ones it passes move down into the hole, so
// each moved item's position is written once.
func (h *heapQueue) up(i int) {
	e := h.items[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !e.before(h.items[parent]) {
			break
		}
		h.items[i] = h.items[parent]
		h.items[i].pos = i
		i = parent
	}
	h.items[i] = e
	e.pos = i
}

// down moves item i toward the leaves until no child goes before it, and
// reports whether it moved.
func (h *heapQueue) down(i int) bool {
	start, n := i, len(h.items)
	e := h.items[i]
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if r := child + 1; r < n && h.items[r].before(h.items[child]) {
			child = r
		}
		if !h.items[child].before(e) {
			break
		}
		h.items[i] = h.items[child]
		h.items[i].pos = i
		i = child
	}
	if i == start {
		return false
	}
	h.items[i] = e
	e.pos = i
	return true
}

// fix restores the heap after the key or seq of item i changed.
func (h *heapQueue) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// heapify restores the heap after any number of keys changed.
func (h *heapQueue) heapify() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// push starts tracking n with the given priority, pinned behind every
// other item if pinned, and returns its item.
func (h *heapQueue) push(n *node.Node, key float64, seq, count uint64, pinned bool) *heapItem {
	var e *heapItem
	if k := len(h.free); k > 0 {
		e, h.free = h.free[k-1], h.free[:k-1]
	} else {
		e = new(heapItem)
	}
	i := len(h.items)
	*e = heapItem{n: n, key: key, seq: seq, count: count, pos: i, pinned: pinned}
	h.items = append(h.items, e)
	if h.of == nil {
		h.of = make(map[*node.Node]*heapItem)
	}
	h.of[n] = e
	n.Queue = qHeap
	h.up(i)
	return e
}

// remove stops tracking the node at i and returns its item.
func (h *heapQueue) remove(i int) heapItem {
	e := h.items[i]
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
		h.items[i].pos = i
	}
	h.items[last] = nil
	h.items = h.items[:last]
	if i != last {
		h.fix(i)
	}
	delete(h.of, e.n)
	e.n.Queue = 0
	out := *e
	*e = heapItem{} // drop the pointer for the collector
	h.free = append(h.free, e)
	return out
}

// replace puts n in old's item, keeping old's priority.
func (h *heapQueue) replace(old, n *node.Node) {
	e := h.of[old]
	delete(h.of, old)
	old.Queue = 0
	e.n = n
	h.of[n] = e
	n.Queue = qHeap
}
