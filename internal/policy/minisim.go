package policy

import "github.com/cachekit/cachekit/internal/node"

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

// miniWindows are the window shares the miniatures try.
var miniWindows = [...]float64{0, 0.01, 0.05, 0.2, 0.4, 0.6, 0.8, 1}

const (
	miniMinCapacity = 256 // the sampling rate keeps miniatures at least this large
	miniEpoch       = 5   // epoch length, in multiples of a miniature's capacity (sampled requests)
	miniDecay       = 0.5 // weight of the previous epochs' hits
	miniStart       = 1   // index in miniWindows of the share used until the first epoch ends
)

type miniature struct {
	p     *TinyLFU
	nodes map[uint64]*node.Node // by key hash
	free  []*node.Node          // evicted nodes, reused
	hits  float64               // this epoch
	score float64               // decayed hits of the past epochs
}

type miniSim struct {
	minis [len(miniWindows)]miniature
	mask  uint64 // a request is sampled when its spread hash & mask == 0
	seen  int    // sampled requests in this epoch
	epoch int
	best  int
}

// newMiniSim returns miniatures for a cache of max entries. The cost is
// bounded whatever max is: about len(miniWindows) × 2 × miniMinCapacity
// nodes at most, and len(miniWindows) miniature updates per sampled request.
func newMiniSim(max uint64, seed uint64) *miniSim {
	rate := uint64(1)
	for max/(2*rate) >= miniMinCapacity {
		rate *= 2
	}
	capacity := max / rate
	m := &miniSim{mask: rate - 1, epoch: miniEpoch * int(capacity), best: miniStart}
	for i, share := range miniWindows {
		p := newTinyLFU(capacity, false, seed, nil)
		p.setWindowShare(share)
		p.fillScale = rate // age as the full-size cache does while filling
		m.minis[i] = miniature{p: p, nodes: make(map[uint64]*node.Node, capacity+1)}
	}
	return m
}

// share returns the window share the miniatures currently recommend.
func (m *miniSim) share() float64 { return miniWindows[m.best] }

// record feeds a request for key hash h to the miniatures if it is in the
// sample, and reports whether the recommended share changed.
func (m *miniSim) record(h uint64) bool {
	x := h * 0xd6e8feb86659fd93
	if (x^x>>32)&m.mask != 0 {
		return false
	}
	for i := range m.minis {
		m.minis[i].request(h)
	}
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

func (mi *miniature) request(h uint64) {
	if n, ok := mi.nodes[h]; ok {
		mi.hits++
		mi.p.Access(n)
		return
	}
	var n *node.Node
	if k := len(mi.free); k > 0 {
		n, mi.free = mi.free[k-1], mi.free[:k-1]
		*n = node.Node{}
	} else {
		n = new(node.Node)
	}
	n.Hash, n.Weight = h, 1
	mi.nodes[h] = n
	mi.p.Add(n)
	for v := mi.p.Evict(); v != nil; v = mi.p.Evict() {
		delete(mi.nodes, v.Hash)
		mi.free = append(mi.free, v)
	}
}
