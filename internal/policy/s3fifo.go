package policy

import "github.com/cachekit/cachekit/internal/node"

func init() {
	Register("s3fifo", "S3-FIFO (SOSP'23): small FIFO (10%) filtering new entries, main FIFO with reinsertion, ghost FIFO of evicted hashes", func(c Config) (Policy, error) {
		if err := noParam("s3fifo", c); err != nil {
			return nil, err
		}
		return NewS3FIFO(c.Max, c.Weighted, c.Hash), nil
	})
}

// Queues of S3-FIFO, stored in node.Queue.
const (
	qS3Small = iota + 1
	qS3Main
)

const (
	s3SmallShare = 10 // the small queue's target is max/s3SmallShare
	s3MaxFreq    = 3  // the frequency saturates at 3 (two bits)
	s3Promote    = 2  // an entry read this often in small moves to main
)

// S3FIFO is S3-FIFO (Yang, Zhang, Qiu, Yue and Vinayak, "FIFO queues are
// all you need for cache eviction", SOSP 2023). New entries enter a small
// FIFO queue holding about 10% of the maximum weight; the rest is a main
// FIFO queue. Every entry has a two-bit frequency (node.Flags, saturating
// at 3) that reads and writes increment.
//
// While the main queue holds no more than its share (90%) and the small
// queue is not empty, victims come from the small queue: its oldest entry
// moves to main (frequency reset) if it was read at least twice since it
// was added — the paper's freq > 1, the default threshold of libCacheSim —
// and is evicted otherwise, its key hash going to the ghost queue.
// Otherwise the oldest main entry is evicted if its frequency is 0, or
// goes back to the end of main with its frequency decremented (CLOCK with
// a 2-bit counter). A new entry whose hash is in the ghost queue skips the
// small queue and enters main directly, and its ghost entry is consumed.
//
// The ghost queue remembers the hashes of as many of the latest evictions
// from the small queue as the main queue holds entries (90% of Max when
// the cache is bounded by count, the number of entries main holds now when
// weights vary), less those since taken back: a hash taken back keeps its
// place in that window (ghostQueue), so the ghost then holds fewer.
//
// S3-FIFO evicts before it inserts, so the entry being inserted is not in
// either queue while its insertion evicts: the small queue holding only
// that entry counts as empty, and a new entry that enters main does not
// count in its weight; and it asks the ghost queue only once those
// evictions are done, so one of them may push the entry's own hash out of
// the ghost. Here the owner adds first, so the entry added last waits at
// the end of the small queue, left out of those tests and of the victims'
// choice while the weight is over the maximum, and goes only once it is
// alone (it weighs more than the maximum); when the weight is within the
// maximum again, it moves to the end of main if the ghost still holds its
// hash (endInsert).
//
// S3FIFO is not safe for concurrent use.
type S3FIFO struct {
	small, main node.List
	fresh       *node.Node // the node being inserted, until the weight is within the maximum (in small)
	max         uint64
	mainMax     uint64
	weighted    bool
	ghost       ghostQueue
	hash        node.Hasher
}

// NewS3FIFO returns an S3-FIFO policy for at most max weight; weighted
// says whether node weights vary (it only affects the ghost's size); hash
// returns a tracked node's key hash.
func NewS3FIFO(max uint64, weighted bool, hash node.Hasher) *S3FIFO {
	if max == 0 {
		max = 1
	}
	return &S3FIFO{max: max, mainMax: max - max/s3SmallShare, weighted: weighted, hash: hash}
}

// Len implements Policy.
func (p *S3FIFO) Len() int { return p.small.Len() + p.main.Len() }

// Weight implements Policy.
func (p *S3FIFO) Weight() uint64 { return p.small.Weight() + p.main.Weight() }

// Max implements Policy.
func (p *S3FIFO) Max() uint64 { return p.max }

// GhostLen returns the number of hashes in the ghost queue (for tests).
func (p *S3FIFO) GhostLen() int { return p.ghost.len() }

func (p *S3FIFO) list(q uint8) *node.List {
	switch q {
	case qS3Small:
		return &p.small
	case qS3Main:
		return &p.main
	}
	panic("policy: node is not tracked by S3FIFO")
}

// Add implements Policy.
func (p *S3FIFO) Add(n *node.Node) {
	n.Flags = 0
	if p.weighted {
		// The ghost's bound follows main's entries, which main's own
		// evictions may have cut since the last small-queue eviction.
		p.ghost.trim(p.ghostBound())
	}
	if p.fresh != nil {
		// The owner adds again before the last insertion's evictions
		// are done (it applies a batch of writes, then evicts): that
		// insertion ends here.
		p.endInsert()
	}
	n.Queue = qS3Small
	p.small.PushBack(n)
	p.fresh = n
	p.settle()
}

// settle ends the insertion once the weight is within the maximum, as
// Evict does when it returns nil (an owner may skip that call).
func (p *S3FIFO) settle() {
	if p.fresh != nil && p.Weight() <= p.max {
		p.endInsert()
	}
}

// endInsert ends the insertion of p.fresh, whose evictions are done: a
// hash the ghost still holds sends it from the end of small to the end of
// main, and is consumed.
func (p *S3FIFO) endInsert() {
	f := p.fresh
	p.fresh = nil
	if p.ghost.take(p.hash(f)) {
		p.small.Remove(f)
		f.Queue = qS3Main
		p.main.PushBack(f)
	}
}

// Access implements Policy.
func (p *S3FIFO) Access(n *node.Node) {
	if n.Flags < s3MaxFreq {
		n.Flags++
	}
}

// Remove implements Policy.
func (p *S3FIFO) Remove(n *node.Node) {
	if p.fresh == n {
		p.fresh = nil
	}
	p.list(n.Queue).Remove(n)
	n.Queue = 0
	p.settle()
}

// Replace implements Policy: n keeps old's queue, place and frequency, and
// the write counts as a read.
func (p *S3FIFO) Replace(old, n *node.Node) {
	n.Queue, n.Flags = old.Queue, old.Flags
	p.list(old.Queue).Replace(old, n)
	if p.fresh == old {
		p.fresh = n
	}
	old.Queue = 0
	p.Access(n)
	p.settle()
}

// Evict implements Policy. Each pass of the loop either evicts, moves a
// small entry to main with frequency 0, or lowers a main entry's
// frequency, so it ends after at most Len + 3·Len passes.
func (p *S3FIFO) Evict() *node.Node {
	for p.Weight() > p.max {
		// The queues without the entry being inserted, which is at the
		// end of its own.
		f := p.fresh
		smallLen, mainLen, mainWeight := p.small.Len(), p.main.Len(), p.main.Weight()
		if f != nil {
			smallLen-- // f waits at the end of small (endInsert)
		}
		if smallLen == 0 && mainLen == 0 {
			// The entry being inserted, alone, weighs more than
			// the maximum: a hash the ghost holds is consumed (it
			// would have sent the entry to main), any other goes
			// to the ghost, as for an entry evicted from small.
			p.fresh = nil
			p.small.Remove(f)
			if h := p.hash(f); !p.ghost.take(h) {
				p.ghost.add(h, p.ghostBound())
			}
			f.Queue = 0
			return f
		}
		if mainLen > 0 && (mainWeight > p.mainMax || smallLen == 0) {
			v := p.main.Front()
			if v.Flags > 0 {
				v.Flags--
				p.main.MoveToBack(v)
				continue
			}
			p.main.Remove(v)
			v.Queue = 0
			p.settle()
			return v
		}
		v := p.small.Front()
		p.small.Remove(v)
		if v.Flags >= s3Promote {
			v.Flags = 0
			v.Queue = qS3Main
			p.main.PushBack(v)
			continue
		}
		v.Queue = 0
		p.ghost.add(p.hash(v), p.ghostBound())
		p.settle()
		return v
	}
	if p.fresh != nil {
		p.endInsert() // the insertion is over
	}
	return nil
}

// ghostBound is how many hashes the ghost queue may hold.
func (p *S3FIFO) ghostBound() uint64 {
	if p.weighted {
		return max(uint64(p.main.Len()), 1)
	}
	return max(p.mainMax, 1)
}

// ghostQueue is a bounded FIFO of key hashes with a membership index.
//
// Every added hash gets a sequence number; ring holds the hashes of the
// sequence numbers head..tail-1 (at index seq & (len(ring)-1)), and table,
// an open-addressing hash table with linear probing, maps each remembered
// hash to the sequence number of its latest addition. A hash taken by
// take, or added again later, leaves a stale ring slot, which is skipped
// when it reaches the head because its number no longer matches the
// table's. So table holds at most tail-head entries, which add keeps under
// its bound. Both arrays grow (doubling) only when the queue outgrows
// them, so a queue that has reached its bound never allocates again.
type ghostQueue struct {
	ring       []uint64
	head, tail uint64 // sequence numbers; 0 marks an empty table slot
	table      []ghostSlot
	shift      uint // 64 - log2(len(table))
}

type ghostSlot struct {
	hash uint64
	seq  uint64 // 0: empty
}

func (g *ghostQueue) len() int { return int(g.tail - g.head) }

// home returns the preferred table slot of h.
func (g *ghostQueue) home(h uint64) int {
	return int((h * 0x9e3779b97f4a7c15) >> g.shift)
}

// find returns the table slot holding h, or -1.
func (g *ghostQueue) find(h uint64) int {
	if len(g.table) == 0 {
		return -1
	}
	mask := len(g.table) - 1
	for i := g.home(h); ; i = (i + 1) & mask {
		s := &g.table[i]
		if s.seq == 0 {
			return -1
		}
		if s.hash == h {
			return i
		}
	}
}

// take reports whether h is remembered, and forgets it if so.
func (g *ghostQueue) take(h uint64) bool {
	i := g.find(h)
	if i < 0 {
		return false
	}
	g.deleteSlot(i)
	return true
}

// add remembers h as the newest hash, first forgetting the oldest ones
// until fewer than bound (at least 1) remain.
func (g *ghostQueue) add(h uint64, bound uint64) {
	if g.head == 0 {
		g.head, g.tail = 1, 1
	}
	for g.tail-g.head >= bound {
		g.pop()
	}
	if g.len() == len(g.ring) {
		g.grow()
	}
	seq := g.tail
	g.tail++
	g.ring[seq&uint64(len(g.ring)-1)] = h
	if i := g.find(h); i >= 0 {
		g.table[i].seq = seq
		return
	}
	mask := len(g.table) - 1
	i := g.home(h)
	for g.table[i].seq != 0 {
		i = (i + 1) & mask
	}
	g.table[i] = ghostSlot{hash: h, seq: seq}
}

// trim forgets the oldest hashes until at most bound remain.
func (g *ghostQueue) trim(bound uint64) {
	for g.tail-g.head > bound {
		g.pop()
	}
}

// pop forgets the oldest hash.
func (g *ghostQueue) pop() {
	seq := g.head
	g.head++
	h := g.ring[seq&uint64(len(g.ring)-1)]
	if i := g.find(h); i >= 0 && g.table[i].seq == seq {
		g.deleteSlot(i)
	}
}

// deleteSlot empties table slot i, shifting later entries of its probe
// run back so that lookups need no tombstones.
func (g *ghostQueue) deleteSlot(i int) {
	mask := len(g.table) - 1
	for j := i; ; {
		g.table[i] = ghostSlot{}
		for {
			j = (j + 1) & mask
			if g.table[j].seq == 0 {
				return
			}
			// The entry at j may move to i unless its home lies
			// cyclically in (i, j].
			k := g.home(g.table[j].hash)
			if i <= j {
				if i < k && k <= j {
					continue
				}
			} else if i < k || k <= j {
				continue
			}
			break
		}
		g.table[i] = g.table[j]
		i = j
	}
}

// grow doubles the ring (at least 16 slots) and rebuilds the table at
// twice the ring's size.
func (g *ghostQueue) grow() {
	size := max(2*len(g.ring), 16)
	ring := make([]uint64, size)
	for seq := g.head; seq != g.tail; seq++ {
		ring[seq&uint64(size-1)] = g.ring[seq&uint64(len(g.ring)-1)]
	}
	g.ring = ring
	old := g.table
	g.table = make([]ghostSlot, 2*size)
	g.shift = 64
	for n := len(g.table); n > 1; n >>= 1 {
		g.shift--
	}
	mask := len(g.table) - 1
	for _, s := range old {
		if s.seq == 0 {
			continue
		}
		i := g.home(s.hash)
		for g.table[i].seq != 0 {
			i = (i + 1) & mask
		}
		g.table[i] = s
	}
}
