package sim

import (
	"fmt"
	"math"
)

// never is the next use of a key that is not requested again.
const never = math.MaxUint32

// future tells, for each request of a trace, when its key is requested
// next. It is computed once per Trace and only read afterwards.
type future struct {
	ids      []uint32 // ids[i] is the key of request i, renumbered 0, 1, …
	next     []uint32 // next[i] is the position of the next request of that key, or never
	distinct int      // the number of distinct keys
}

func (t *Trace) nextUses() (*future, error) {
	t.once.Do(func() { t.future, t.err = newFuture(t.keys) })
	return t.future, t.err
}

// newFuture numbers the keys in one forward pass and finds the next uses
// in one backward pass.
func newFuture(keys []uint64) (*future, error) {
	if uint64(len(keys)) >= never {
		return nil, fmt.Errorf("OPT handles traces of fewer than %d requests, this one has %d", uint64(never), len(keys))
	}
	f := &future{ids: make([]uint32, len(keys)), next: make([]uint32, len(keys))}
	idOf := make(map[uint64]uint32)
	for i, k := range keys {
		id, ok := idOf[k]
		if !ok {
			id = uint32(len(idOf))
			idOf[k] = id
		}
		f.ids[i] = id
	}
	f.distinct = len(idOf)
	last := make([]uint32, f.distinct)
	for i := range last {
		last[i] = never
	}
	for i := len(keys) - 1; i >= 0; i-- {
		id := f.ids[i]
		f.next[i] = last[id]
		last[id] = uint32(i)
	}
	return f, nil
}

// OPT is Bélády's optimal offline policy (MIN): on a miss with the cache
// full it admits the requested key and evicts the resident key whose next
// request is farthest in the future. With bypass, it may instead refuse to admit the requested key when that key is
// requested again later than every resident key (or never), which is the
// optimum for caches with an admission filter. OPT knows its trace: it must
// be replayed with exactly the trace's keys, in order (Access panics
// otherwise). Each access costs O(log capacity).
type OPT struct {
	keys     []uint64
	f        *future
	t        int // the position of the next request
	capacity int
	bypass   bool
	heap     []slot  // resident keys, a max-heap by next use
	pos      []int32 // pos[id] is id's index in heap, or -1
}

type slot struct {
	next uint32 // the position of the key's next request
	id   uint32
}

// NewOPT returns an empty OPT cache of capacity entries for replaying t.
// Several OPT caches of one Trace share the next-use table, which the
// first one computes: 8 bytes per request. A nil t is an error (OPT must
// know the trace it replays).
func NewOPT(t *Trace, capacity int, bypass bool) (*OPT, error) {
	if t == nil {
		return nil, errNilTrace
	}
	if err := checkCapacity(capacity); err != nil {
		return nil, err
	}
	f, err := t.nextUses()
	if err != nil {
		return nil, err
	}
	o := &OPT{
		keys:     t.keys,
		f:        f,
		capacity: capacity,
		bypass:   bypass,
		heap:     make([]slot, 0, min(capacity, f.distinct)),
		pos:      make([]int32, f.distinct),
	}
	for i := range o.pos {
		o.pos[i] = -1
	}
	return o, nil
}

// Access implements Cache. It panics if key is not the trace's next key.
func (o *OPT) Access(key uint64) bool {
	i := o.t
	if i >= len(o.keys) || o.keys[i] != key {
		panic(fmt.Sprintf("sim: OPT request %d is key %d, not the trace's", i, key))
	}
	o.t++
	id, next := o.f.ids[i], o.f.next[i]
	if p := o.pos[id]; p >= 0 {
		// Its next use was i, now it is later: it can only move up.
		o.heap[p].next = next
		o.up(int(p))
		return true
	}
	if len(o.heap) < o.capacity {
		o.heap = append(o.heap, slot{next, id})
		o.pos[id] = int32(len(o.heap) - 1)
		o.up(len(o.heap) - 1)
		return false
	}
	if o.bypass && next >= o.heap[0].next {
		return false
	}
	o.pos[o.heap[0].id] = -1
	o.heap[0] = slot{next, id}
	o.pos[id] = 0
	o.down(0)
	return false
}

// Len returns the number of keys the cache holds.
func (o *OPT) Len() int { return len(o.heap) }

func (o *OPT) up(j int) {
	h := o.heap
	s := h[j]
	for j > 0 {
		parent := (j - 1) / 2
		if h[parent].next >= s.next {
			break
		}
		h[j] = h[parent]
		o.pos[h[j].id] = int32(j)
		j = parent
	}
	h[j] = s
	o.pos[s.id] = int32(j)
}

func (o *OPT) down(j int) {
	h := o.heap
	s := h[j]
	for {
		c := 2*j + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r].next > h[c].next {
			c = r
		}
		if h[c].next <= s.next {
			break
		}
		h[j] = h[c]
		o.pos[h[j].id] = int32(j)
		j = c
	}
	h[j] = s
	o.pos[s.id] = int32(j)
}
