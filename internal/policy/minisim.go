package policy

import (
	"unsafe"

	"github.com/cachekit/cachekit/internal/node"
)

// Window sizing by miniature simulation.
//
// The best split between TinyLFU's window (recency) and main space
// (frequency) depends on the workload, and changes with it. Instead of
// climbing towards it one step per sample period, miniSim measures it: it
// feeds a spatial sample of the keys (those whose hash falls in 1/rate of
// the hash space, as in SHARDS) to a few small TinyLFU caches of
// capacity max/rate, each with a fixed window share, and every epoch points
// the real cache's window at the share whose miniature hit most, with
// older epochs' hits decaying by half each epoch. A spatial sample of the
// keys preserves each key's whole access pattern, so a miniature cache sees
// what a full-size one would, at 1/rate of the cost.

// miniWindows are the window shares the miniatures try: those from index
// miniGhosted on also admit a refused candidate that comes back soon (see
// TinyLFU.admit), the others only on frequency. Whether the ghost helps
// depends on the workload (it gains on recency-friendly traces, it would
// churn on loops), so it is a choice the miniatures measure like the
// window share; it matters most with a small window, so it is tried with
// small shares. Trying it with 1 and 20% did as well on the trace suite
// (mean / points below the best peer − 0.1: 49.58 / 14) as with 1, 5, 20
// and 40% (49.58 / 14; 0, 1, 5 and 20% or 1, 5, 10 and 20%: within 0.01),
// at 10 miniatures' cost instead of 12; dropping plain shares to stay at
// 8 miniatures lost (0, 1, 5, 20, 60, 100% and the ghost at 1 and 5%:
// 49.47 / 14).
var miniWindows = [...]float64{0, 0.01, 0.05, 0.2, 0.4, 0.6, 0.8, 1, 0.01, 0.2}

const miniGhosted = 8

// The epoch length was measured on the trace suite (bench/cmd/hitratio,
// default policy, 51 trace × capacity points): the mean hit ratio was
// 49.16% with epochs of 5 capacities, 49.22–49.28% with 6 to 12, 49.12%
// with 20; 8 is in the middle of that plateau. Shorter epochs follow
// noise in the sample, longer ones follow phase changes too late.
// Miniatures of 1024 entries instead of 256 (fewer, larger epochs on
// short traces) lost: mean 49.00%.
const (
	miniMinCapacity = 256 // the sampling rate keeps miniatures at least this large
	miniEpoch       = 8   // epoch length, in multiples of a miniature's capacity (sampled requests)
	miniDecay       = 0.5 // weight of the previous epochs' hits
	miniStart       = 1   // index in miniWindows of the share used until the first epoch ends
	miniStartFill   = 4   // the miniatures start when the cache holds 1/miniStartFill of its maximum
)

// The miniatures start when the cache is a quarter full, so that a cache
// that never gets there (one sized generously) does not pay for them: up
// to about 300 bytes per sampled key (a miniKey holds a node for each of
// the 10 miniatures; a few hundred keys at most), 120 kB for a cache of
// 1,000 entries; the ghosted miniatures' filters add 512 bytes each at
// most. Measured on the trace suite (TestSuite), starting them at a
// quarter of the maximum hits about as often as starting them with the
// cache (mean 49.27% against 49.29%, before the ghost), while
// starting them at the first eviction lost 0.1 point (49.19%): the
// miniatures then miss the whole fill, and decide later.

// The miniatures see the same requests, so they share what depends only
// on the requests: one frequency sketch (every request counts once, and
// ages it once, whichever miniatures hold the key) and one table from a
// key hash to the key's nodes, one per miniature. A sampled request then
// costs one table lookup and one sketch update, plus each miniature's
// queue moves and admission checks.

type miniature struct {
	p     *TinyLFU // passive: its sketch is the miniSim's
	hits  float64  // this epoch
	score float64  // decayed hits of the past epochs
}

// miniKey is a sampled key's nodes, one per miniature, and its hash; in
// says which miniatures hold it. Node i is tagged i, so miniHash finds the
// miniKey from any of its nodes.
type miniKey struct {
	nodes [len(miniWindows)]node.Node // first field: miniHash depends on it
	hash  uint64
	in    uint16
}

// miniKeyOf returns the miniKey that holds n.
func miniKeyOf(n *node.Node) *miniKey {
	return (*miniKey)(unsafe.Add(unsafe.Pointer(n), -int(n.Tag)*int(unsafe.Sizeof(*n))))
}

// miniHash is the miniatures' Hasher.
func miniHash(n *node.Node) uint64 { return miniKeyOf(n).hash }

// in has a bit per miniature: this fails to compile with more than 16.
var _ [16 - len(miniWindows)]struct{}

type miniSim struct {
	minis  [len(miniWindows)]miniature
	sketch sketch
	fill   fillAger
	keys   map[uint64]*miniKey // by key hash: the keys some miniature holds
	free   []*miniKey          // no longer held by any miniature, reused
	mask   uint64              // a request is sampled when its spread hash & mask == 0
	seen   int                 // sampled requests in this epoch
	epoch  int
	best   int
}

// newMiniSim returns miniatures for a cache of max entries. The cost is
// bounded whatever max is: about 2 × miniMinCapacity sampled keys at most
// per miniature, and per sampled request one lookup, one sketch update and
// len(miniWindows) miniature updates.
func newMiniSim(max uint64, seed uint64) *miniSim {
	rate := uint64(1)
	for max/(2*rate) >= miniMinCapacity {
		rate *= 2
	}
	capacity := max / rate
	m := &miniSim{mask: rate - 1, epoch: miniEpoch * int(capacity), best: miniStart,
		fill: newFillAger(rate), // age as the full-size cache does while filling
		keys: make(map[uint64]*miniKey, capacity+1)}
	m.sketch.init(sketchCapacity(capacity, false), sketchPeriod(false))
	for i, share := range miniWindows {
		p := newTinyLFUWith(capacity, false, seed, miniHash, nil, &m.sketch)
		p.passive = true
		p.setWindowShare(share)
		if i >= miniGhosted {
			p.ghost, p.useGhost = newGhostFilter(capacity/ghostGenShare), true
		}
		m.minis[i] = miniature{p: p}
	}
	return m
}

// share returns the window share the miniatures currently recommend.
func (m *miniSim) share() float64 { return miniWindows[m.best] }

// ghost reports whether the miniatures currently recommend the ghost.
func (m *miniSim) ghost() bool { return m.best >= miniGhosted }

// record feeds a request for key hash h to the miniatures if it is in the
// sample, and reports whether the recommendation (share, ghost) changed.
func (m *miniSim) record(h uint64) bool {
	x := h * 0xd6e8feb86659fd93
	if (x^x>>32)&m.mask != 0 {
		return false
	}
	m.request(h)
	if m.seen++; m.seen < m.epoch {
		return false
	}
	m.seen = 0
	for i := range m.minis {
		mi := &m.minis[i]
		mi.score = mi.score*miniDecay + mi.hits
		mi.hits = 0
	}
	// Ties keep the current share.
	best := m.best
	for i := range m.minis {
		if m.minis[i].score > m.minis[best].score {
			best = i
		}
	}
	changed := best != m.best
	m.best = best
	return changed
}

// request feeds a sampled request for h to every miniature.
func (m *miniSim) request(h uint64) {
	k := m.keys[h]
	m.sketch.increment(h)
	// The miniatures have one size and admit everything until full, so
	// they fill together: the first one stands for all.
	if first := m.minis[0].p; (k == nil || k.in&1 == 0) && first.weight < first.max {
		m.fill.age(&m.sketch, uint64(first.Len())+1)
	}
	if k == nil {
		if n := len(m.free); n > 0 {
			k, m.free = m.free[n-1], m.free[:n-1]
		} else {
			k = new(miniKey)
		}
		m.keys[h] = k
		k.hash = h
	}
	for i := range m.minis {
		mi := &m.minis[i]
		n := &k.nodes[i]
		bit := uint16(1) << i
		if k.in&bit != 0 {
			mi.hits++
			mi.p.Access(n)
			continue
		}
		*n = node.Node{Weight: 1, Tag: uint8(i)}
		k.in |= bit
		mi.p.Add(n)
		for v := mi.p.Evict(); v != nil; v = mi.p.Evict() {
			if v == n {
				k.in &^= bit // h's own entry is released below
				continue
			}
			m.release(v, bit)
		}
	}
	if k.in == 0 {
		delete(m.keys, h)
		m.free = append(m.free, k)
	}
}

// release records that the miniature of bit evicted v.
func (m *miniSim) release(v *node.Node, bit uint16) {
	k := miniKeyOf(v)
	k.in &^= bit
	if k.in == 0 {
		delete(m.keys, k.hash)
		m.free = append(m.free, k)
	}
}
