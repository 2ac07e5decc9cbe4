package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
)

// refModel is a naive reference for the policies whose eviction order is
// fully determined (LRU, FIFO, CLOCK, LFU with aging, LRFU, DLFU): every
// entry keeps a priority key and a sequence number, and the victim is the
// entry with the least (key, seq), found by a scan. TestReferenceOrder
// checks that each policy evicts exactly as its model does.
type refEnt struct {
	k     uint64
	w     uint64
	key   float64
	seq   uint64
	count uint64
	order int // list position for LRU/FIFO/CLOCK
	ref   bool
}

type refModel struct {
	kind  string
	max   uint64
	ents  map[uint64]*refEnt
	clock uint64
	age   float64
	pos   int
	incr  float64
	lam   float64
	fresh *refEnt // the entry being inserted, never a victim unless alone (clock: kept behind the entries the hand spares)
}

// settle ends an insertion once the weight is within the maximum.
func (m *refModel) settle() {
	if m.fresh != nil && m.weight() <= m.max {
		m.admit()
	}
}

// admit ends an insertion: LFU-DA keys the new entry with the age its
// eviction left.
func (m *refModel) admit() {
	if m.kind == "lfu" {
		m.fresh.key = m.age + float64(m.fresh.count)
	}
	m.fresh = nil
}

func (m *refModel) remove(k uint64) {
	if m.fresh == m.ents[k] {
		m.fresh = nil
	}
	delete(m.ents, k)
	m.settle()
}

func (m *refModel) rescale() {
	if m.incr > 0x1p512 {
		for _, e := range m.ents {
			e.key *= 0x1p-512
		}
		m.incr *= 0x1p-512
	}
}

func (m *refModel) weight() uint64 {
	var w uint64
	for _, e := range m.ents {
		w += e.w
	}
	return w
}

func (m *refModel) add(k, w uint64) {
	if m.fresh != nil {
		m.admit()
	}
	m.clock++
	m.pos++
	e := &refEnt{k: k, w: w, order: m.pos, seq: m.clock}
	switch m.kind {
	case "lfu":
		e.count, e.key = 1, m.age+1
	case "lrfu":
		e.key = m.lam * float64(m.clock)
	case "dlfu":
		e.key = m.incr
		m.ents[k] = e
		m.incr *= min(1+1/(m.lam*float64(m.max)), 2)
		m.rescale()
	}
	m.ents[k] = e
	m.fresh = e
	m.settle()
}

func (m *refModel) access(k uint64) {
	e := m.ents[k]
	m.clock++
	switch m.kind {
	case "lru":
		m.pos++
		e.order = m.pos
	case "clock":
		e.ref = true
	case "lfu":
		e.count++
		e.key = m.age + float64(e.count)
		e.seq = m.clock
	case "lrfu":
		now := m.lam * float64(m.clock)
		e.key = now + math.Log1p(math.Exp2(e.key-now))/math.Ln2
		e.seq = m.clock
	case "dlfu":
		e.key += m.incr
		e.seq = m.clock
		m.incr *= min(1+1/(m.lam*float64(m.max)), 2)
		m.rescale()
	}
}

func (m *refModel) replace(k, w uint64) {
	m.ents[k].w = w
	switch m.kind {
	case "fifo":
		m.clock++
	case "clock":
		m.clock++
		m.ents[k].ref = true
	default:
		m.access(k)
	}
	m.settle()
}

func (m *refModel) evict() (uint64, bool) {
	if m.weight() <= m.max {
		m.settle()
		return 0, false
	}
	var best *refEnt
	for {
		for _, e := range m.ents {
			if e == m.fresh && len(m.ents) > 1 {
				continue // a victim only when alone
			}
			if best == nil {
				best = e
				continue
			}
			switch m.kind {
			case "lru", "fifo", "clock":
				if e.order < best.order {
					best = e
				}
			default:
				if e.key < best.key || e.key == best.key && e.seq < best.seq {
					best = e
				}
			}
		}
		if m.kind == "clock" && best.ref && best != m.fresh {
			best.ref = false
			m.pos++
			best.order = m.pos
			if m.fresh != nil {
				m.pos++
				m.fresh.order = m.pos
			}
			best = nil
			continue
		}
		break
	}
	delete(m.ents, best.k)
	if best == m.fresh {
		m.fresh = nil // never admitted: LFU-DA's age stays
	} else if m.kind == "lfu" {
		m.age = best.key
	}
	m.settle()
	return best.k, true
}

// TestReferenceOrder drives each policy and its naive model with the same
// random operations (weights 0 to max, replacements, removals, eviction
// passes after a few operations) and requires the same victims in the same
// order.
func TestReferenceOrder(t *testing.T) {
	for _, kind := range []string{"lru", "fifo", "clock", "lfu", "lrfu", "dlfu"} {
		for _, max := range []uint64{1, 3, 10, 40} {
			for seed := uint64(1); seed <= 4; seed++ {
				var p Policy
				m := &refModel{kind: kind, max: max, ents: map[uint64]*refEnt{}, incr: 1}
				switch kind {
				case "lru":
					p = NewLRU(max)
				case "fifo":
					p = NewFIFO(max)
				case "clock":
					p = NewClock(max)
				case "lfu":
					p = NewLFU(max)
				case "lrfu":
					m.lam = 0.1
					p = NewLRFU(max, 0.1)
				case "dlfu":
					m.lam = 0.5
					p = NewDLFU(max, false, 0.5)
				}
				r := rand.New(rand.NewPCG(seed, max))
				nodes := map[uint64]*node.Node{}
				for i := range 5000 {
					k := r.Uint64N(3*max + 3)
					w := r.Uint64N(max + 1)
					n := nodes[k]
					switch op := r.IntN(10); {
					case n == nil:
						n = node.NewKeyed(mix.Mix(k), uint32(w))
						nodes[k] = n
						p.Add(n)
						m.add(k, w)
					case op < 6:
						p.Access(n)
						m.access(k)
					case op < 8:
						nn := node.NewKeyed(mix.Mix(k), uint32(w))
						p.Replace(n, nn)
						nodes[k] = nn
						m.replace(k, w)
					default:
						p.Remove(n)
						delete(nodes, k)
						m.remove(k)
					}
					if r.IntN(5) != 0 {
						continue
					}
					for {
						v := p.Evict()
						rk, ok := m.evict()
						if (v != nil) != ok {
							t.Fatalf("%s max %d seed %d op %d: evict %v, reference %v", kind, max, seed, i, v != nil, ok)
						}
						if v == nil {
							break
						}
						if gk := mix.Unmix(node.KeyedHash(v)); gk != rk {
							t.Fatalf("%s max %d seed %d op %d: evicted %d, reference %d", kind, max, seed, i, gk, rk)
						}
						delete(nodes, rk)
					}
				}
			}
		}
	}
}
