package policy

import (
	"math"
	"slices"

	"github.com/cachekit/cachekit/internal/mix"
)

// Window sizing by miniature simulation.
//
// The best split between TinyLFU's window (recency) and main space
// (frequency) depends on the workload, and changes with it. Instead of
// climbing towards it one step per sample period, miniSim measures it: it
// feeds a spatial sample of the keys (those whose hash falls in 1/rate of
// the hash space, as in SHARDS) to a few small TinyLFU caches of
// capacity max/rate (a little less: see sampleMargin), each with a fixed
// window share, and every epoch points the real cache's window at the
// share whose miniature hit most, with older epochs' hits decaying by half
// each epoch. A spatial sample of the keys preserves each key's whole
// access pattern, so a miniature cache sees what a full-size one would, at
// 1/rate of the cost.

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
//
// The smallest miniature was 256 entries (miniatures of 256 to 511)
// until a cache of 1,000 entries, whose miniatures then held 468 entries
// each, cost 10 bytes per entry more than otter's (docs/benchmarks/
// memory.md). With 192 (miniatures of 192 to 383, 222 at 1,000 entries)
// its sampled keys went from about 380 to 190 after the fill, and from
// about 1,700 to 820 under a churn of new keys. Caches whose miniatures
// were 384 to 511 entries get them halved; the others keep theirs.
// TestSuite (mean / points below the best peer − 0.1 per run): seeds 0-7
// 49.51 / 13.75 either way; seeds 8-15 49.51 / 14.00 with 256, 49.50 /
// 14.88 with 192 (lirs-2_pools at 2,000 entries 59.25 → 59.22 against
// 59.33, and mixed at 1,000 74.42 → 74.32 against 74.36, crossed the
// line); 128 lost more (49.46 / 14.88 on seeds 0-7).
const (
	miniMinCapacity = 192  // the sampling rate keeps miniatures at least this large,
	miniShare       = 64   // and at least 1/miniShare of the cache,
	miniMaxCapacity = 1536 // up to this (see miniLeast)
	miniEpoch       = 8    // epoch length, in multiples of a miniature's capacity (sampled requests)
	miniDecay       = 0.5  // weight of the previous epochs' hits
	miniStart       = 1    // index in miniWindows of the share used until the first epoch ends
	miniStartFill   = 4    // the miniatures start when the cache holds 1/miniStartFill of its maximum
	// miniSwitchMargin is how much more (relatively) the best miniature
	// must have scored than the one the cache follows for the cache to
	// switch to it.
	miniSwitchMargin = 0.01
)

// Without the margin, where the miniatures score alike the cache follows
// the noise of each epoch's sample from share to share (lirs-sprite at 400
// entries: 29 switches in 134k requests, between 1% and 100%; 18 with the
// margin), and each switch moves entries between the window and the main
// space. TestSuite, mean over the hash seeds 0-7 / points below the best
// peer − 0.1: 49.47 / 14 without a margin, 49.49 / 14 with 0.5%, 49.51 /
// 13 with 1%, 49.44 / 14 with 2%; on the seeds 8-15, 49.47 / 15 without,
// 49.54 / 14 with 1%. It gains most where a large window is best
// (lirs-sprite at 1,000 +0.85, cache2k-web12 at 200 +0.33), and loses on
// adaptsize-request at 5,000 (−0.48). Switching only when the same share
// wins two epochs in a row lost (49.34 / 15).

// The miniatures start when the cache is a quarter full, so that a cache
// that never gets there (one sized generously) does not pay for them:
// about 52 bytes per sampled key (a 48-byte slot and 2 to 8 bytes of the
// key table; about as many keys as a miniature's entries after the fill,
// up to four times as many under churn; see miniLeast), a sketch of the
// cache's words per key (1.75 per miniature entry for caches of 585
// entries and more: 43 kB at most) and the ghosted miniatures' filters
// (12 bits per key, two generations of a third of a miniature each).
// Measured on the trace suite (TestSuite), starting them at a quarter of
// the maximum hits about as often as starting them with the cache (mean
// 49.27% against 49.29%, before the ghost), while starting them at the
// first eviction lost 0.1 point (49.19%): the miniatures then miss the
// whole fill, and decide later.

// The miniatures see the same requests, so they share what depends only
// on the requests: one frequency sketch (every request counts once, and
// ages it once, whichever miniatures hold the key) and one table from a
// key hash to the key's slot, which holds the key's place in each
// miniature. A sampled request then costs one table lookup and one sketch
// update, plus each miniature's queue moves and admission checks.
//
// A miniature is TinyLFU (tinylfu.go) with a fixed window, cut down to
// what a fixed, unweighted, passive cache needs, and stored compactly:
// its queues link slots by 16-bit index instead of by pointer, and a slot
// keeps which queue holds it in two bits per miniature, so a sampled key
// costs 48 bytes for all ten miniatures instead of a node of at least 24
// bytes in each. TestMiniSimSharingIsExact checks that each
// miniature hits, admits and evicts exactly as a TinyLFU of its own would:
// a change to TinyLFU's queues or admission must be made here too.

// miniLink is a slot's place in one miniature's queue: its neighbours.
type miniLink struct {
	prev, next uint16
}

// miniKey is a slot: a sampled key's id, its places in the miniatures'
// queues, and which queue of each miniature holds it, in two bits per
// miniature (qWindow, qProbation or qProtected; 0: the miniature does not
// hold the key). 48 bytes.
//
// The id is the top half of the key's hash, and the miniatures' sketch and
// ghost filters see the id spread back over 64 bits (hash), not the key's
// own hash: a 64-bit hash took 8 bytes more per slot, and with padding 56
// bytes instead of 48, for a few hundred to a few thousand sampled keys
// (a cache of 1,000 entries holds about 190 slots after its fill and
// about 820 under a churn of new keys). Two of n keys held at once share
// an id with probability about n²/2³³, one in a thousand for 3,000 keys;
// such a pair counts as one key in the miniatures, and nowhere else.
type miniKey struct {
	id     uint32
	queues uint32
	links  [len(miniWindows)]miniLink
}

// sampleID returns the id of a key of hash h.
func sampleID(h uint64) uint32 { return uint32(h >> 32) }

// hash returns the 64-bit hash that the miniatures' sketch and ghost
// filters see for s's key: its id spread by a bijective mixer, so that
// every bit depends on all of the id's.
func (s *miniKey) hash() uint64 { return mix.Mix(uint64(s.id)) }

// sampleHash returns what miniKey.hash returns for a key of hash h.
func sampleHash(h uint64) uint64 { return mix.Mix(uint64(sampleID(h))) }

// queue returns the queue of miniature i that holds slot s, or 0.
func (s *miniKey) queue(i int) uint8 { return uint8(s.queues >> (2 * i) & 3) }

// held reports whether miniature i holds slot s.
func (s *miniKey) held(i int) bool { return s.queue(i) != 0 }

func (s *miniKey) setQueue(i int, q uint8) {
	s.queues = s.queues&^(3<<(2*i)) | uint32(q)<<(2*i)
}

// queues has two bits per miniature: this fails to compile with more than
// 16.
var _ [16 - len(miniWindows)]struct{}

// A slot index is 16 bits: the slots in use are at most the keys the
// miniatures hold (each fewer than 2 × miniMaxCapacity), one being
// requested, and the unused slot 0. This fails to compile if they might
// not fit.
var _ [1<<16 - len(miniWindows)*2*miniMaxCapacity - 2]struct{}

// miniList is a miniature's queue: slot indices, 0 for none.
type miniList struct {
	head, tail uint16
	n          int
}

// miniature is one fixed-window TinyLFU over the slots.
type miniature struct {
	window, probation, protected miniList
	windowMax, protectedMax      int
	ghost                        *ghostFilter // nil unless it admits refused candidates that come back
	rng                          uint64       // as TinyLFU.random
	hits                         float64      // this epoch
	score                        float64      // decayed hits of the past epochs
}

type miniSim struct {
	minis    [len(miniWindows)]miniature
	capacity int // of each miniature
	sketch   sketch
	fill     fillAger
	// slots[0] is unused, so that index 0 means none; slots no miniature
	// holds are on free.
	slots []miniKey
	free  []uint16
	keys  keyTable // by key hash: the slots some miniature holds
	mask  uint64   // a request is sampled when its spread hash & mask == 0
	cur   uint16   // the slot of the request being fed
	seen  int      // sampled requests in this epoch
	epoch int
	best  int
}

// miniLeast returns the smallest miniature for a cache of limit entries:
// miniMinCapacity, or 1/miniShare of the cache if that is more, up to
// miniMaxCapacity. The sampling rate then gives miniatures of least to
// 2 × least − 1 entries (less the sampling margin).
//
// A large cache's miniatures sampled as few keys as a small cache's (192
// to 383), and on the large caches of the trace suite the sample's noise
// decided which share the cache followed: arc-p3 at 100,000 entries hit
// 38.57% to 40.8% depending on the hash seed. With miniatures of at least
// a sixty-fourth of the cache, caches above 12,288 entries sample one key
// in 32 to 64 up to 98,304 entries (a cache of 100,000 sampled one in 256
// before), and larger caches keep miniatures of 1,536 to 3,071 entries,
// the largest whose slot indices fit in 16 bits. The miniatures hold
// about one 48-byte slot per miniature entry after the fill, up to four
// under a churn of new keys: memory.md's heap after the fill at 100,000
// entries went from 81 to 82 bytes per entry. The miniatures' work per
// request grows as the rate falls: replaying 4 million Zipf requests
// through a TinyLFU of 100,000 entries (rate 64 against 512) took 18 ns
// more per request (median of 6 alternating pairs, +1 to +56 ns, of 160
// to 270). TestSuite (mean / points below the best peer − 0.1 per run):
// seeds 0–7 49.70 / 12.75 → 49.72 / 12.25, seeds 8–15 49.69 / 13.00 →
// 49.71 / 12.38; arc-p3 @100000 40.03 → 40.79 (its worst seed 38.57 →
// 40.27) and 40.11 → 40.80, scarab-recs @100000 +0.27 and +0.17, no other
// point moved by more than 0.11. A thirty-second of the cache, up to
// 3,072 entries, did no better (seeds 0–7: 49.72 / 12.25, scarab-recs
// @50000 −0.35); a hundred-and-twenty-eighth, up to 768, gained less on
// arc-p3 @400000 and lost 0.18 on scarab-recs @50000.
func miniLeast(limit uint64) uint64 {
	return min(max(limit/miniShare, miniMinCapacity), miniMaxCapacity)
}

// miniSketchWords returns the width of the sketch of miniatures of
// capacity entries for a cache of limit entries: as many words per key as
// the cache's own sketch has (sketchWords), so that a miniature is the
// cache it stands for.
func miniSketchWords(capacity, limit uint64) int {
	keys := uint64(sketchCapacity(limit, false))
	return max(int(capacity+capacity*3/4), int(sketchMinWords*capacity/keys))
}

// newMiniSim returns miniatures for a cache of limit entries. The cost is
// bounded whatever limit is: fewer than 2 × miniMaxCapacity keys per
// miniature, and per sampled request one lookup, one sketch update and
// len(miniWindows) miniature updates.
func newMiniSim(limit uint64, seed uint64) *miniSim {
	rate, least := uint64(1), miniLeast(limit)
	for limit/(2*rate) >= least {
		rate *= 2
	}
	capacity := max(limit/rate, 1)
	epoch := miniEpoch * int(capacity)
	capacity -= sampleMargin(capacity, rate)
	m := &miniSim{mask: rate - 1, epoch: epoch, best: miniStart,
		capacity: int(capacity),
		fill:     newFillAger(rate), // age as the full-size cache does while filling
		// Both grow with the keys sampled: sized for the most they
		// might hold, they would cost a small cache more than its
		// entries do (measured: a cache of 1,000 entries holds about
		// 190 sampled keys after its fill).
		slots: make([]miniKey, 1, 64),
		keys:  newKeyTable()}
	m.sketch.init(int(capacity), miniSketchWords(capacity, limit), sketchPeriod(false), 0)
	for i, share := range miniWindows {
		mi := &m.minis[i]
		w, p := windowSplit(share, capacity)
		mi.windowMax, mi.protectedMax = int(w), int(p)
		mi.rng = seed | 1
		if i >= miniGhosted {
			mi.ghost = newGhostFilter(capacity / ghostGenShare)
		}
	}
	return m
}

// sampleMargin returns how many entries a miniature of capacity entries,
// fed 1/rate of the keys, is made smaller than that: two standard
// deviations of the number of sampled keys among capacity × rate keys.
//
// A spatial sample takes each key with probability 1/rate, so a working
// set as large as the cache puts a binomial number of keys in the sample,
// capacity give or take sqrt(capacity × (1 − 1/rate)): 14 for a cache of
// 1,000 entries (rate 4, miniatures of 250), 17 for 10,000 (rate 32,
// 312): 5 to 7% of the miniature. The errors do not cost alike. A loop
// just longer than the cache whose sample happens to fit the miniatures
// makes every share look perfect, and a large window then wins on the
// first lap (it admits the loop's keys at once): the cache follows it and
// misses every request of the loop, as LRU does. A working set just smaller than the cache whose
// sample happens not to fit costs little: the miniatures favour a small
// window, which holds a loop or a frequency-skewed set as well. So the
// miniatures model a cache smaller by two deviations: in about 2% of
// samples a set just over the cache still fits them, instead of half.
//
// Measured with TestSuite over eight hash seeds (seeds 0-7, mean hit ratio
// / points below the best peer − 0.1 per run): without the margin 49.18 /
// 14.12, mixed at 1,000 entries (a loop of 1,011 keys between two recency
// phases) at 11.7% for two seeds of eight; one deviation 49.51 / 14.00, two
// 49.52 / 13.25, three 49.52 / 13.75. On seeds 8-15, not used to choose:
// 48.70 / 15.12 without, 49.50 / 13.88 with two (mixed at 1,000: mean
// 35.14 → 74.43; lirs-loop at 1,000: 98.07 → 98.61). On seeds 0-7 no
// other point lost more than 0.15 point, and five gained 0.16 to 0.32.
// Without sampling (rate 1) there is no error and no margin.
func sampleMargin(capacity, rate uint64) uint64 {
	if rate == 1 {
		return 0
	}
	sd := math.Sqrt(float64(capacity) * (1 - 1/float64(rate)))
	return uint64(math.Ceil(2 * sd))
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
	// Ties, and near ties, keep the current share.
	best := m.best
	for i := range m.minis {
		if m.minis[i].score > m.minis[best].score {
			best = i
		}
	}
	if m.minis[best].score <= m.minis[m.best].score*(1+miniSwitchMargin) {
		best = m.best
	}
	changed := best != m.best
	m.best = best
	return changed
}

// request feeds a sampled request for h to every miniature.
func (m *miniSim) request(h uint64) {
	id := sampleID(h)
	k := m.keys.get(id, m.slots)
	m.sketch.increment(sampleHash(h))
	// The miniatures have one size and admit everything until full, so
	// they fill together: the first one stands for all.
	if first := &m.minis[0]; (k == 0 || !m.slots[k].held(0)) && first.len() < m.capacity {
		m.fill.age(&m.sketch, uint64(first.len())+1)
	}
	if k == 0 {
		if n := len(m.free); n > 0 {
			k, m.free = m.free[n-1], m.free[:n-1]
		} else {
			k = uint16(len(m.slots))
			m.slots = appendSlot(m.slots)
		}
		m.slots[k].id = id
		m.keys.put(k, m.slots)
	}
	m.cur = k
	for i := range m.minis {
		if m.slots[k].held(i) {
			m.minis[i].hits++
			m.access(i, k)
			continue
		}
		m.add(i, k)
	}
	if m.slots[k].queues == 0 {
		m.release(k)
	}
}

// appendSlot appends a zero slot to slots. A full array grows by a
// quarter (16 slots at least) to the allocator's next size class (whole
// pages past 32 kB), not by the doubling of append: the keys the
// miniatures hold level off soon after the cache fills, and the doubling
// left up to half the array unused (a cache of 1,000 entries held about
// 155 slots after its fill in an array of 256, 12 kB, now of 197, 9.5 kB).
func appendSlot(slots []miniKey) []miniKey {
	if len(slots) < cap(slots) {
		return append(slots, miniKey{})
	}
	n := len(slots) + max(16, len(slots)/4)
	// Growing a nil slice by n rounds n up to the size class (or pages).
	grown := slices.Grow([]miniKey(nil), n)[:len(slots)]
	copy(grown, slots)
	return append(grown, miniKey{})
}

// release returns slot k, which no miniature holds any more.
func (m *miniSim) release(k uint16) {
	m.keys.remove(k, m.slots)
	m.free = append(m.free, k)
}

// The queue operations of miniature i. A miniature's links are stored in
// the slots, so they take the miniature's index.

func (m *miniSim) link(i int, k uint16) *miniLink { return &m.slots[k].links[i] }

func (m *miniSim) pushBack(i int, l *miniList, k uint16, queue uint8) {
	n := m.link(i, k)
	n.prev, n.next = l.tail, 0
	m.slots[k].setQueue(i, queue)
	if l.tail == 0 {
		l.head = k
	} else {
		m.link(i, l.tail).next = k
	}
	l.tail = k
	l.n++
}

func (m *miniSim) unlink(i int, l *miniList, k uint16) {
	n := m.link(i, k)
	if n.prev == 0 {
		l.head = n.next
	} else {
		m.link(i, n.prev).next = n.next
	}
	if n.next == 0 {
		l.tail = n.prev
	} else {
		m.link(i, n.next).prev = n.prev
	}
	n.prev, n.next = 0, 0
	m.slots[k].setQueue(i, 0)
	l.n--
}

// queue returns miniature i's queue q.
func (mi *miniature) queue(q uint8) *miniList {
	switch q {
	case qWindow:
		return &mi.window
	case qProbation:
		return &mi.probation
	}
	return &mi.protected
}

func (mi *miniature) len() int { return mi.window.n + mi.probation.n + mi.protected.n }

// add puts k, new to miniature i, at the back of its window and evicts
// what no longer fits, as TinyLFU's Add and Evict do.
func (m *miniSim) add(i int, k uint16) {
	mi := &m.minis[i]
	m.pushBack(i, &mi.window, k, qWindow)
	for mi.window.n > mi.windowMax {
		cand := mi.window.head
		m.unlink(i, &mi.window, cand)
		if mi.len()+1 <= m.capacity {
			m.pushBack(i, &mi.probation, cand, qProbation)
			continue
		}
		victim := mi.probation.head
		if victim == 0 {
			victim = mi.protected.head
		}
		if victim != 0 && m.admit(i, cand, victim) {
			m.unlink(i, mi.queue(m.slots[victim].queue(i)), victim)
			m.pushBack(i, &mi.probation, cand, qProbation)
			m.evicted(i, victim)
		} else {
			m.evicted(i, cand)
		}
		return
	}
	if mi.len() > m.capacity {
		v := mi.probation.head
		if v == 0 {
			v = mi.protected.head
		}
		if v == 0 {
			v = mi.window.head
		}
		m.unlink(i, mi.queue(m.slots[v].queue(i)), v)
		m.evicted(i, v)
	}
}

// evicted records that miniature i no longer holds k (already unlinked).
// The slot of the key being requested is left to request to release.
func (m *miniSim) evicted(i int, k uint16) {
	if m.slots[k].queues == 0 && k != m.cur {
		m.release(k)
	}
}

// access moves k, held by miniature i, as TinyLFU.touch does.
func (m *miniSim) access(i int, k uint16) {
	mi := &m.minis[i]
	switch q := m.slots[k].queue(i); q {
	case qProbation:
		m.unlink(i, &mi.probation, k)
		m.pushBack(i, &mi.protected, k, qProtected)
		for mi.protected.n > mi.protectedMax && mi.protected.n > 1 { // TinyLFU.demote
			v := mi.protected.head
			m.unlink(i, &mi.protected, v)
			m.pushBack(i, &mi.probation, v, qProbation)
		}
	default:
		l := mi.queue(q)
		m.unlink(i, l, k)
		m.pushBack(i, l, k, q)
	}
}

// admit reports whether miniature i admits cand in place of victim, as
// TinyLFU.admit does.
func (m *miniSim) admit(i int, cand, victim uint16) bool {
	mi := &m.minis[i]
	ch := m.slots[cand].hash()
	cf := m.sketch.estimate(ch)
	if cf > m.sketch.estimate(m.slots[victim].hash()) {
		return true
	}
	if mi.ghost != nil {
		if mi.ghost.has(ch) {
			return true
		}
		mi.ghost.add(ch)
	}
	if cf >= admitFloodFreq {
		return xorshift(&mi.rng)&127 == 0
	}
	return false
}
