package loading

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A sequential model-based test: one goroutine drives a Cache (in a
// synctest bubble, with a loader whose answers and durations are scripted)
// and a reference model of the documented semantics with the same random
// operations, comparing every answer, the loader calls and Stats after
// each step. Loads take scripted (fake) time, so background reloads are
// still in flight while later operations run; the model keeps them too.

// mLoaderMode says which loaders the cache gets.
type mLoaderMode int

const (
	mSingle mLoaderMode = iota // Loader only
	mBulk                      // BulkLoader only
	mBoth                      // both
)

type mConfig struct {
	ttl, refreshAfter, maxStale, errorTTL, notFoundTTL time.Duration
	mode                                               mLoaderMode
	maxRefreshes                                       int // Options.MaxConcurrentRefreshes
	slowLoads                                          bool
	limits                                             bool // loaders call LimitTTL
	maxManyLoads                                       int
	loadTimeout                                        time.Duration // -1: none
	probe                                              bool
	weights                                            bool // MaxWeight, with values too heavy for it
	jitter, randVal                                    float64
}

func (c mConfig) String() string {
	return fmt.Sprintf("TTL=%v RefreshAfter=%v MaxStale=%v ErrorTTL=%v NotFoundTTL=%v mode=%d MaxConcurrentRefreshes=%d slow=%v limits=%v MaxManyLoads=%d LoadTimeout=%v probe=%v weights=%v jitter=%v rand=%v",
		c.ttl, c.refreshAfter, c.maxStale, c.errorTTL, c.notFoundTTL, c.mode, c.maxRefreshes, c.slowLoads, c.limits, c.maxManyLoads, c.loadTimeout, c.probe, c.weights, c.jitter, c.randVal)
}

func randomConfig(seed uint64) mConfig {
	r := rand.New(rand.NewPCG(seed, 99))
	ms := time.Millisecond
	pick := func(ds ...time.Duration) time.Duration { return ds[r.IntN(len(ds))] }
	c := mConfig{
		ttl:         pick(0, 100*ms, 100*ms),
		maxStale:    pick(0, 50*ms),
		errorTTL:    pick(-1, 0, 30*ms),
		notFoundTTL: pick(-1, 0, 20*ms),
		mode:        mLoaderMode(r.IntN(3)),
		slowLoads:   r.IntN(3) > 0,
		limits:      r.IntN(3) == 0,
	}
	c.refreshAfter = pick(0, 40*ms)
	if r.IntN(3) == 0 {
		c.maxRefreshes = 1
	}
	if r.IntN(3) == 0 {
		c.maxManyLoads = 1
	}
	c.loadTimeout = -1
	if c.slowLoads && r.IntN(3) == 0 {
		c.loadTimeout = 25 * ms // no load takes exactly that long
	}
	c.probe = r.IntN(3) == 0
	c.weights = r.IntN(3) == 0
	if r.IntN(3) == 0 {
		c.jitter = 0.5
		c.randVal = []float64{0, 0.3, 0.999}[r.IntN(3)]
	}
	return c
}

// mScript decides the loader's answer for the n-th call of key: the same
// for the cache's loader and for the model, whatever the order of calls.
type mScript struct {
	seed    uint64
	minDur  time.Duration
	slow    bool
	limits  bool
	weights bool
	mu      sync.Mutex
	errs    map[[2]int]error
	allErrs map[int][]error
}

type mKind int

const (
	mValue mKind = iota
	mFail
	mNotFound
)

type mOutcome struct {
	kind  mKind
	val   string
	err   error
	dur   time.Duration
	limit time.Duration // -1: no LimitTTL call
}

func (s *mScript) outcome(key, n int) mOutcome {
	r := rand.New(rand.NewPCG(s.seed, uint64(key)<<32|uint64(n)))
	p := r.IntN(100)
	o := mOutcome{limit: -1, dur: s.minDur}
	if s.slow {
		o.dur = max([]time.Duration{0, 0, 10 * time.Millisecond, 30 * time.Millisecond, 45 * time.Millisecond}[r.IntN(5)], s.minDur)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mk := func(f func() error) error {
		e, ok := s.errs[[2]int{key, n}]
		if !ok {
			e = f()
			s.errs[[2]int{key, n}] = e
			s.allErrs[key] = append(s.allErrs[key], e)
		}
		return e
	}
	switch {
	case p < 65:
		o.kind, o.val = mValue, fmt.Sprintf("v%d.%d", key, n)
		if s.weights && r.IntN(5) == 0 {
			o.val = "H" + o.val // heavier than MaxWeight
		}
		if s.limits && r.IntN(3) == 0 {
			o.limit = []time.Duration{0, 15 * time.Millisecond, 200 * time.Millisecond}[r.IntN(3)]
		}
	case p < 85:
		o.kind = mFail
		o.err = mk(func() error { return fmt.Errorf("fail k%d n%d", key, n) })
	default:
		o.kind = mNotFound
		o.err = mk(func() error { return fmt.Errorf("k%d n%d: %w", key, n, ErrNotFound) })
	}
	return o
}

type mProbeOutcome struct {
	found bool
	val   string
	ttl   time.Duration
}

func (s *mScript) probeOutcome(key, n int) mProbeOutcome {
	r := rand.New(rand.NewPCG(s.seed^0x5eed, uint64(key)<<32|uint64(n)))
	if r.IntN(5) >= 2 {
		return mProbeOutcome{}
	}
	return mProbeOutcome{found: true, val: fmt.Sprintf("p%d.%d", key, n),
		ttl: []time.Duration{-1, 0, 15 * time.Millisecond, time.Hour}[r.IntN(4)]}
}

type mProber struct {
	sc    *mScript
	mu    sync.Mutex
	n     map[int]int
	calls []int
}

func (p *mProber) Probe(ctx context.Context, key int) (context.Context, string, time.Duration, bool) {
	p.mu.Lock()
	p.n[key]++
	n := p.n[key]
	p.calls = append(p.calls, key)
	p.mu.Unlock()
	o := p.sc.probeOutcome(key, n)
	return nil, o.val, o.ttl, o.found
}

func (p *mProber) take() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	slices.Sort(c)
	return c
}

func (s *mScript) errsOf(key int) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.allErrs[key])
}

// mSource is the cache's loader: it answers from the script and records
// its calls.
type mSource struct {
	sc        *mScript
	mu        sync.Mutex
	n         map[int]int
	loadCalls []int   // keys of Load calls
	bulkCalls [][]int // keys of LoadMany calls, sorted
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *mSource) Load(ctx context.Context, key int) (string, error) {
	s.mu.Lock()
	s.n[key]++
	n := s.n[key]
	s.loadCalls = append(s.loadCalls, key)
	s.mu.Unlock()
	o := s.sc.outcome(key, n)
	if err := sleepCtx(ctx, o.dur); err != nil {
		return "", err
	}
	if o.limit >= 0 {
		LimitTTL(ctx, o.limit)
	}
	return o.val, o.err
}

func (s *mSource) LoadMany(ctx context.Context, keys []int) (map[int]string, error) {
	s.mu.Lock()
	ks := slices.Clone(keys)
	slices.Sort(ks)
	s.bulkCalls = append(s.bulkCalls, ks)
	ns := make([]int, len(keys))
	for i, k := range keys {
		s.n[k]++
		ns[i] = s.n[k]
	}
	s.mu.Unlock()
	m := map[int]string{}
	var be *BulkError[int]
	var dur time.Duration
	for i, k := range keys {
		o := s.sc.outcome(k, ns[i])
		dur = max(dur, o.dur)
		switch o.kind {
		case mValue:
			m[k] = o.val
			if o.limit >= 0 {
				LimitTTL(ctx, o.limit)
			}
		case mFail:
			if be == nil {
				be = &BulkError[int]{Errors: map[int]error{}}
			}
			be.Errors[k] = o.err
		case mNotFound:
			if ns[i]%2 == 0 { // explicit, or absent from the map
				if be == nil {
					be = &BulkError[int]{Errors: map[int]error{}}
				}
				be.Errors[k] = o.err
			}
		}
	}
	if err := sleepCtx(ctx, dur); err != nil {
		return nil, err
	}
	if be != nil {
		return m, be
	}
	return m, nil
}

// take returns and resets the calls recorded since the last take.
func (s *mSource) take() (loads []int, bulks [][]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	loads, bulks = s.loadCalls, s.bulkCalls
	s.loadCalls, s.bulkCalls = nil, nil
	slices.Sort(loads)
	slices.SortFunc(bulks, func(a, b []int) int { return slices.Compare(a, b) })
	return loads, bulks
}

// The model.

const mNever = int64(1<<63 - 1)

type mEntry struct {
	hasValue   bool
	value      string
	gen        uint64 // ExpireAlls before the value's load began
	freshUntil int64  // mNever: no TTL
	nextLoad   int64  // refresh-ahead age (or freshUntil)

	err     error // remembered failure or not-found answer
	errGen  uint64
	retryAt int64
}

type mFlight struct {
	key     int
	gen     uint64
	prev    *mEntry
	discard bool
	out     mOutcome
	call    *mCall
}

type mCall struct {
	flights    []*mFlight
	start, end int64
	background bool
	limit      int64 // -1: none
	failed     bool
}

type model struct {
	cfg      mConfig
	sc       *mScript
	now      int64
	gen      uint64
	expAt    []int64 // expAt[g]: time of the ExpireAll that ended generation g
	entries  map[int]*mEntry
	active   map[int]*mFlight // the table of flights
	calls    []*mCall         // loader calls in flight
	n        map[int]int
	pn       map[int]int
	probes   []int
	stats    Stats
	loads    []int
	bulks    [][]int
	errorTTL int64 // resolved; <0: not cached
	nfTTL    int64 // resolved; 0: never ends; <0: not cached
	slots    int
}

func newModel(cfg mConfig, sc *mScript) *model {
	m := &model{cfg: cfg, sc: sc, entries: map[int]*mEntry{}, active: map[int]*mFlight{}, n: map[int]int{}, pn: map[int]int{}}
	m.errorTTL = int64(cfg.errorTTL)
	if m.errorTTL == 0 {
		m.errorTTL = int64(DefaultErrorTTL)
	}
	m.nfTTL = int64(cfg.notFoundTTL)
	if m.nfTTL == 0 {
		m.nfTTL = int64(cfg.ttl)
	}
	m.slots = cfg.maxRefreshes
	if m.slots == 0 {
		m.slots = DefaultMaxConcurrentRefreshes
	}
	return m
}

// life returns the end of a lifetime d starting now, scaled by the
// jitter factor.
func (m *model) life(d int64) int64 {
	if m.cfg.jitter == 0 {
		return m.now + d
	}
	f := 1 + m.cfg.jitter*(m.cfg.randVal-0.5)
	return m.now + max(int64(float64(d)*f), 1)
}

// errorLife returns the end of a failure's lifetime d starting now: the
// jitter only lengthens it (a factor in [1, 1 + jitter]).
func (m *model) errorLife(d int64) int64 {
	if m.cfg.jitter == 0 {
		return m.now + d
	}
	f := 1 + m.cfg.jitter*m.cfg.randVal
	return m.now + max(int64(float64(d)*f), 1)
}

func addT(t int64, d int64) int64 {
	if t == mNever || d == mNever {
		return mNever
	}
	return t + d
}

type mState int

const (
	mUnusable mState = iota
	mFresh
	mStale
	mNegative
)

// valueUntil is when e's value stops being fresh: its TTL, or the first
// ExpireAll after its load began.
func (m *model) valueUntil(e *mEntry) int64 {
	until := e.freshUntil
	if e.gen < m.gen {
		until = min(until, m.expAt[e.gen])
	}
	return until
}

func (m *model) errBlocks(e *mEntry) bool {
	return e.err != nil && m.now < e.retryAt && e.errGen >= m.gen
}

func (m *model) view(e *mEntry) (mState, bool) {
	if e == nil {
		return mUnusable, false
	}
	if e.hasValue {
		until := m.valueUntil(e)
		switch {
		case m.now < until:
			if e.err != nil {
				// A failed reload holds the next one back for ErrorTTL.
				return mFresh, m.now >= e.retryAt
			}
			return mFresh, m.now >= e.nextLoad
		case m.now < addT(until, int64(m.cfg.maxStale)):
			return mStale, !m.errBlocks(e)
		}
	}
	if m.errBlocks(e) {
		return mNegative, false
	}
	return mUnusable, false
}

type mAnswer struct {
	present bool // a value comes back
	value   string
	err     error // nil, or the error (for stale: the source failure or nil)
	stale   bool
}

func (m *model) answerOf(e *mEntry, st mState) mAnswer {
	switch st {
	case mFresh:
		return mAnswer{present: true, value: e.value}
	case mStale:
		return mAnswer{present: true, value: e.value, stale: true, err: e.err}
	case mNegative:
		return mAnswer{err: e.err}
	}
	panic("unusable")
}

func (m *model) valueEntry(v string, gen uint64) *mEntry {
	e := &mEntry{hasValue: true, value: v, gen: gen, freshUntil: mNever, nextLoad: mNever}
	if m.cfg.ttl > 0 {
		e.freshUntil = m.life(int64(m.cfg.ttl))
	}
	e.nextLoad = e.freshUntil
	if m.cfg.refreshAfter > 0 {
		e.nextLoad = m.life(int64(m.cfg.refreshAfter))
	}
	return e
}

// startCall starts one loader call for keys.
func (m *model) startCall(keys []int, bulk, background bool) *mCall {
	call := &mCall{start: m.now, background: background, limit: -1}
	var dur time.Duration
	for _, k := range keys {
		m.n[k]++
		o := m.sc.outcome(k, m.n[k])
		if bulk && o.kind == mNotFound && m.n[k]%2 != 0 {
			o.err = ErrNotFound // absent from LoadMany's map
		}
		dur = max(dur, o.dur)
		if o.kind == mValue && o.limit >= 0 && (call.limit < 0 || int64(o.limit) < call.limit) {
			call.limit = int64(o.limit)
		}
		call.failed = call.failed || o.kind == mFail
		f := &mFlight{key: k, gen: m.gen, prev: m.entries[k], out: o, call: call}
		m.active[k] = f
		call.flights = append(call.flights, f)
	}
	call.end = m.now + int64(dur)
	if to := m.cfg.loadTimeout; to > 0 && dur > to {
		// The load times out: every key of the call fails.
		call.end = m.now + int64(to)
		call.failed, call.limit = true, -1
		for _, f := range call.flights {
			f.out = mOutcome{kind: mFail, err: errMLoadTimedOut}
		}
	}
	m.calls = append(m.calls, call)
	if bulk {
		ks := slices.Clone(keys)
		slices.Sort(ks)
		m.bulks = append(m.bulks, ks)
	} else {
		m.loads = append(m.loads, keys...)
	}
	return call
}

// load starts the loader calls for keys (to load together) as the cache
// does, and returns their flights.
func (m *model) load(keys []int, background bool) []*mFlight {
	if len(keys) == 0 {
		return nil
	}
	var fl []*mFlight
	if m.cfg.mode == mBulk || (m.cfg.mode == mBoth && len(keys) > 1) {
		return m.startCall(keys, true, background).flights
	}
	for _, k := range keys {
		fl = append(fl, m.startCall([]int{k}, false, background).flights...)
	}
	return fl
}

func (m *model) slotsUsed() int {
	n := 0
	for _, c := range m.calls {
		if c.background {
			n++
		}
	}
	return n
}

// finishCall ends call at its end time: each flight's result is stored
// unless it was overtaken.
func (m *model) finishCall(call *mCall) {
	m.now = call.end
	m.stats.Loads++
	if call.failed {
		m.stats.LoadErrors++
	}
	m.stats.LoadTime += time.Duration(call.end - call.start)
	for _, f := range call.flights {
		if m.active[f.key] == f {
			delete(m.active, f.key)
		}
		if !f.discard {
			m.store(f)
		}
	}
}

func (m *model) store(f *mFlight) {
	o := f.out
	switch o.kind {
	case mValue:
		e := m.valueEntry(o.val, f.gen)
		if l := f.call.limit; l >= 0 && m.now+l < e.freshUntil {
			e.freshUntil = m.now + l
			e.nextLoad = min(e.nextLoad, e.freshUntil)
		}
		if strings.HasPrefix(o.val, "H") {
			delete(m.entries, f.key) // too heavy to keep
			return
		}
		m.entries[f.key] = e
	case mNotFound:
		if m.nfTTL < 0 {
			delete(m.entries, f.key)
			return
		}
		end := mNever
		if m.nfTTL > 0 {
			end = m.life(m.nfTTL)
		}
		m.entries[f.key] = &mEntry{err: o.err, errGen: f.gen, retryAt: end}
	case mFail:
		end := m.now
		if m.errorTTL >= 0 {
			end = m.errorLife(m.errorTTL)
		}
		e := &mEntry{err: o.err, errGen: f.gen, retryAt: end}
		// A failed reload leaves the value in place (the view decides
		// whether it can still be served).
		if p := f.prev; p != nil && p.hasValue && m.entries[f.key] == p && m.now < addT(p.freshUntil, int64(m.cfg.maxStale)) {
			e.hasValue, e.value, e.gen = true, p.value, p.gen
			e.freshUntil, e.nextLoad = p.freshUntil, p.nextLoad
		}
		if e.hasValue || m.errorTTL >= 0 {
			m.entries[f.key] = e
		}
	}
}

// advanceTo moves the model's clock to t, finishing the calls that end
// by then.
func (m *model) advanceTo(t int64) {
	for {
		i := -1
		for j, c := range m.calls {
			if c.end <= t && (i < 0 || c.end < m.calls[i].end) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		c := m.calls[i]
		m.calls = slices.Delete(m.calls, i, i+1)
		m.finishCall(c)
	}
	m.now = t
}

func flightAnswer(f *mFlight) mAnswer {
	if f.out.kind == mValue {
		return mAnswer{present: true, value: f.out.val}
	}
	return mAnswer{err: f.out.err}
}

func (m *model) count(st mState) {
	switch st {
	case mFresh:
		m.stats.Hits++
	case mStale:
		m.stats.StaleHits++
	case mNegative:
		m.stats.ErrorHits++
	}
}

// refresh starts background reloads of due keys, as Get (one key) and
// GetMany do.
func (m *model) refresh(due []int) {
	if len(due) == 0 {
		return
	}
	if m.cfg.mode == mSingle || len(due) == 1 {
		for _, k := range due {
			if m.slotsUsed() >= m.slots {
				m.stats.RefreshesSkipped++
				continue
			}
			m.stats.Refreshes++
			m.startCall([]int{k}, m.cfg.mode == mBulk, true)
		}
		return
	}
	if m.slotsUsed() >= m.slots {
		m.stats.RefreshesSkipped += uint64(len(due))
		return
	}
	m.stats.Refreshes += uint64(len(due))
	m.startCall(due, true, true)
}

// joinable returns key's flight in flight that a miss may wait for: one
// that began before the latest ExpireAll is overtaken instead (unless the
// caller's context has ended).
func (m *model) joinable(key int, cancelled bool) *mFlight {
	f := m.active[key]
	if f != nil && !cancelled && f.gen < m.gen {
		f.discard = true
		delete(m.active, key)
		return nil
	}
	return f
}

func (m *model) get(key int, cancelled bool, deadline int64) mAnswer {
	e := m.entries[key]
	st, due := m.view(e)
	if st != mUnusable {
		m.count(st)
		a := m.answerOf(e, st)
		if due && !cancelled && m.active[key] == nil {
			m.refresh([]int{key})
		}
		return a
	}
	f := m.joinable(key, cancelled)
	if cancelled {
		return mAnswer{err: context.Canceled}
	}
	m.stats.Misses++
	if f != nil {
		m.stats.Shared++
	} else {
		if m.cfg.probe {
			m.pn[key]++
			m.probes = append(m.probes, key)
			if po := m.sc.probeOutcome(key, m.pn[key]); po.found {
				e := m.valueEntry(po.val, m.gen)
				if po.ttl >= 0 && m.now+int64(po.ttl) < e.freshUntil {
					e.freshUntil = m.now + int64(po.ttl)
					e.nextLoad = min(e.nextLoad, e.freshUntil)
				}
				m.entries[key] = e
				return mAnswer{present: true, value: po.val}
			}
		}
		f = m.load([]int{key}, false)[0]
	}
	if f.call.end > deadline {
		m.advanceTo(deadline)
		return mAnswer{err: context.DeadlineExceeded}
	}
	m.advanceTo(f.call.end)
	return flightAnswer(f)
}

func (m *model) getMany(keys []int, cancelled bool, deadline int64) map[int]mAnswer {
	out := map[int]mAnswer{}
	seen := map[int]bool{}
	var need, due []int
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		e := m.entries[k]
		st, isDue := m.view(e)
		if st == mUnusable {
			need = append(need, k)
			continue
		}
		m.count(st)
		out[k] = m.answerOf(e, st)
		if isDue && !cancelled && m.active[k] == nil {
			due = append(due, k)
		}
	}
	m.refresh(due)
	var waits, owned []*mFlight
	var ownedKeys []int
	for _, k := range need {
		f := m.joinable(k, cancelled)
		if cancelled {
			out[k] = mAnswer{err: context.Canceled}
			continue
		}
		m.stats.Misses++
		if f != nil {
			m.stats.Shared++
			waits = append(waits, f)
			continue
		}
		ownedKeys = append(ownedKeys, k)
	}
	if m.cfg.mode == mSingle && m.cfg.maxManyLoads == 1 && len(ownedKeys) > 1 {
		// One load at a time: each starts when the one before ends.
		var regs []*mFlight
		for _, k := range ownedKeys {
			f := &mFlight{key: k, gen: m.gen, prev: m.entries[k]}
			m.active[k] = f
			regs = append(regs, f)
		}
		for _, f := range regs {
			c := m.startCall([]int{f.key}, false, false)
			g := c.flights[0]
			g.gen, g.prev = f.gen, f.prev
			*f = *g
			c.flights[0] = f
			m.active[f.key] = f
			m.advanceTo(c.end)
		}
		owned = regs
	} else {
		owned = m.load(ownedKeys, false)
	}
	waits = append(waits, owned...)
	end := m.now
	for _, f := range waits {
		end = max(end, f.call.end)
	}
	m.advanceTo(min(end, deadline))
	for _, f := range waits {
		if f.call.end > deadline {
			out[f.key] = mAnswer{err: context.DeadlineExceeded}
		} else {
			out[f.key] = flightAnswer(f)
		}
	}
	return out
}

func (m *model) overtake(key int) {
	if f := m.active[key]; f != nil {
		f.discard = true
		delete(m.active, key)
	}
}

func (m *model) set(key int, v string) bool {
	m.overtake(key)
	if strings.HasPrefix(v, "H") {
		delete(m.entries, key)
		return false
	}
	m.entries[key] = m.valueEntry(v, m.gen)
	return true
}

func (m *model) expireAll() {
	m.expAt = append(m.expAt, m.now)
	m.gen++
}

// boundaries returns the future instants at which something changes.
func (m *model) boundaries() []int64 {
	var out []int64
	add := func(t int64) {
		if t != mNever && t > m.now-2 {
			out = append(out, t)
		}
	}
	for _, e := range m.entries {
		if e.hasValue {
			u := m.valueUntil(e)
			add(u)
			add(addT(u, int64(m.cfg.maxStale)))
			add(e.nextLoad)
		}
		if e.err != nil {
			add(e.retryAt)
		}
	}
	for _, t := range m.expAt {
		add(addT(t, int64(m.cfg.maxStale)))
	}
	for _, c := range m.calls {
		add(c.end)
	}
	slices.Sort(out)
	return out
}

// Operations.

type mOpKind int

const (
	opGet mOpKind = iota
	opGetMany
	opSet
	opDelete
	opExpireAll
	opInvalidateAll
	opAdvance
)

type mOp struct {
	kind      mOpKind
	key       int
	keys      []int
	d         time.Duration
	val       string
	cancelled bool
	deadline  time.Duration // 0: none
}

func (o mOp) String() string {
	c := ""
	if o.cancelled {
		c = "cancelled ctx, "
	}
	if o.deadline > 0 {
		c = fmt.Sprintf("ctx timeout %v, ", o.deadline)
	}
	switch o.kind {
	case opGet:
		return fmt.Sprintf("Get(%s%d)", c, o.key)
	case opGetMany:
		return fmt.Sprintf("GetMany(%s%v)", c, o.keys)
	case opSet:
		return fmt.Sprintf("Set(%d,%q)", o.key, o.val)
	case opDelete:
		return fmt.Sprintf("Delete(%d)", o.key)
	case opExpireAll:
		return "ExpireAll()"
	case opInvalidateAll:
		return "InvalidateAll()"
	default:
		return fmt.Sprintf("Sleep(%v)", o.d)
	}
}

const mKeys = 3

func (m *model) genDeadline(r *rand.Rand) time.Duration {
	if !m.cfg.slowLoads || r.IntN(4) != 0 {
		return 0
	}
	return []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, 35 * time.Millisecond}[r.IntN(3)]
}

// safeDeadline returns d, moved on until no load in flight ends then: a
// tie between the caller's deadline and a load's end would make the
// outcome depend on the scheduler.
func (m *model) safeDeadline(d time.Duration) int64 {
	t := m.now + int64(d)
	for {
		tie := false
		for _, c := range m.calls {
			tie = tie || c.end == t
		}
		for _, dur := range []int64{0, int64(10 * time.Millisecond), int64(30 * time.Millisecond), int64(45 * time.Millisecond), int64(m.cfg.loadTimeout), 1} {
			tie = tie || m.now+dur == t
		}
		if !tie {
			return t
		}
		t++
	}
}

func (m *model) genOp(r *rand.Rand, step int) mOp {
	p := r.IntN(100)
	switch {
	case p < 30:
		return mOp{kind: opGet, key: r.IntN(mKeys), cancelled: r.IntN(10) == 0, deadline: m.genDeadline(r)}
	case p < 42:
		ks := make([]int, 1+r.IntN(4))
		for i := range ks {
			ks[i] = r.IntN(mKeys)
		}
		op := mOp{kind: opGetMany, keys: ks, cancelled: r.IntN(10) == 0}
		if !(m.cfg.mode == mSingle && m.cfg.maxManyLoads == 1) {
			op.deadline = m.genDeadline(r)
		}
		return op
	case p < 47:
		v := fmt.Sprintf("s%d", step)
		if m.cfg.weights && r.IntN(4) == 0 {
			v = "H" + v
		}
		return mOp{kind: opSet, key: r.IntN(mKeys), val: v}
	case p < 51:
		return mOp{kind: opDelete, key: r.IntN(mKeys)}
	case p < 55:
		return mOp{kind: opExpireAll}
	case p < 57:
		return mOp{kind: opInvalidateAll}
	case p < 80:
		if b := m.boundaries(); len(b) > 0 {
			t := b[r.IntN(len(b))] + int64(r.IntN(3)-1)
			if t > m.now {
				return mOp{kind: opAdvance, d: time.Duration(t - m.now)}
			}
		}
		fallthrough
	default:
		ds := []time.Duration{time.Nanosecond, 5 * time.Millisecond, 20 * time.Millisecond, 70 * time.Millisecond, 2 * time.Second}
		return mOp{kind: opAdvance, d: ds[r.IntN(len(ds))]}
	}
}

// errMLoadTimedOut stands for the error of a load that LoadTimeout ended:
// it wraps context.DeadlineExceeded and says that the load timed out.
var errMLoadTimedOut = errors.New("model: load timed out")

func errMatches(got, want error) bool {
	if want == errMLoadTimedOut {
		return errors.Is(got, context.DeadlineExceeded) && strings.Contains(got.Error(), "timed out")
	}
	if want == context.DeadlineExceeded || want == context.Canceled {
		return got == want // the caller's own ctx.Err()
	}
	return errors.Is(got, want)
}

// checkAnswer compares a Get-style (value, error) with the model's answer.
func checkAnswer(sc *mScript, key int, v string, present bool, err error, want mAnswer) string {
	bad := func() string {
		return fmt.Sprintf("key %d: got (%q, present=%v, %v); model: %+v", key, v, present, err, want)
	}
	if present != want.present || (want.present && v != want.value) {
		return bad()
	}
	if want.stale {
		if !errors.Is(err, ErrStale) {
			return bad()
		}
		for _, e := range sc.errsOf(key) {
			if errors.Is(err, e) != (e == want.err) {
				return bad() + " (wrapped source error)"
			}
		}
		if want.err != nil && !errMatches(err, want.err) {
			return bad() + " (wrapped source error)"
		}
		return ""
	}
	if want.err == nil {
		if err != nil {
			return bad()
		}
		return ""
	}
	if !errMatches(err, want.err) || errors.Is(err, ErrStale) {
		return bad()
	}
	return ""
}

// runModel runs ops (or, if gen > 0, gen generated operations) against a
// cache and the model, and returns the first divergence ("" if none) and
// the operations run up to it.
func runModel(t *testing.T, cfg mConfig, seed uint64, ops []mOp, gen int) (div string, ran []mOp) {
	synctest.Test(t, func(t *testing.T) {
		sc := &mScript{seed: seed, slow: cfg.slowLoads, limits: cfg.limits, weights: cfg.weights, errs: map[[2]int]error{}, allErrs: map[int][]error{}}
		if cfg.maxRefreshes > 0 {
			// Slots are given back when a load's goroutine ends: loads
			// must take some (fake) time for that to be deterministic.
			sc.minDur = time.Nanosecond
		}
		src := &mSource{sc: sc, n: map[int]int{}}
		opts := Options[int, string]{
			TTL: cfg.ttl, RefreshAfter: cfg.refreshAfter, MaxStale: cfg.maxStale,
			ErrorTTL: cfg.errorTTL, NotFoundTTL: cfg.notFoundTTL,
			MaxConcurrentRefreshes: cfg.maxRefreshes,
			LoadTimeout:            cfg.loadTimeout, Clock: bubbleClock{},
			MaxManyLoads: cfg.maxManyLoads,
			TTLJitter:    cfg.jitter,
		}
		prober := &mProber{sc: sc, n: map[int]int{}}
		if cfg.probe {
			opts.Probe = prober
		}
		if cfg.weights {
			opts.MaxWeight = 100
			opts.Weigher = func(k int, v string) uint32 {
				if strings.HasPrefix(v, "H") {
					return 1000
				}
				return 1
			}
		}
		switch cfg.mode {
		case mSingle:
			opts.Loader = src
		case mBulk:
			opts.BulkLoader = src
		case mBoth:
			opts.Loader, opts.BulkLoader = src, src
		}
		start := time.Now()
		c, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.rand = func() float64 { return cfg.randVal }
		m := newModel(cfg, sc)
		r := rand.New(rand.NewPCG(seed, 7))
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		n := len(ops)
		if gen > 0 {
			n = gen
		}
		for i := 0; i < n; i++ {
			var op mOp
			if gen > 0 {
				op = m.genOp(r, i)
			} else {
				op = ops[i]
			}
			ran = append(ran, op)
			ctx := context.Background()
			deadline := mNever
			if op.cancelled {
				ctx = cancelled
			} else if op.deadline > 0 {
				deadline = m.safeDeadline(op.deadline)
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(deadline-m.now))
				defer cancel()
			}
			var d string
			switch op.kind {
			case opGet:
				v, err := c.Get(ctx, op.key)
				synctest.Wait()
				want := m.get(op.key, op.cancelled, deadline)
				d = checkAnswer(sc, op.key, v, err == nil || errors.Is(err, ErrStale), err, want)
			case opGetMany:
				got, err := c.GetMany(ctx, op.keys)
				synctest.Wait()
				want := m.getMany(op.keys, op.cancelled, deadline)
				var be *BulkError[int]
				if err != nil && !errors.As(err, &be) {
					d = fmt.Sprintf("GetMany error %v is not a *BulkError", err)
					break
				}
				for k := range got {
					if _, ok := want[k]; !ok {
						d = fmt.Sprintf("GetMany returned %v; model %+v", got, want)
					}
				}
				for k, w := range want {
					v, ok := got[k]
					var kerr error
					if be != nil {
						kerr = be.Errors[k]
					}
					if d = checkAnswer(sc, k, v, ok, kerr, w); d != "" {
						break
					}
				}
			case opSet:
				got := c.Set(op.key, op.val)
				synctest.Wait()
				if want := m.set(op.key, op.val); got != want {
					d = fmt.Sprintf("Set returned %v; model %v", got, want)
				}
			case opDelete:
				c.Delete(op.key)
				synctest.Wait()
				m.overtake(op.key)
				delete(m.entries, op.key)
			case opExpireAll:
				c.ExpireAll()
				synctest.Wait()
				m.expireAll()
			case opInvalidateAll:
				c.InvalidateAll()
				synctest.Wait()
				for k := range m.active {
					m.overtake(k)
				}
				clear(m.entries)
			case opAdvance:
				time.Sleep(op.d)
				synctest.Wait()
				m.advanceTo(m.now + int64(op.d))
			}
			m.advanceTo(m.now) // background loads that take no time are over
			if got := int64(time.Since(start)); d == "" && got != m.now {
				d = fmt.Sprintf("clock %v, model %v", time.Duration(got), time.Duration(m.now))
			}
			if d == "" {
				loads, bulks := src.take()
				wl, wb := slices.Clone(m.loads), slices.Clone(m.bulks)
				m.loads, m.bulks = nil, nil
				slices.Sort(wl)
				slices.SortFunc(wb, func(a, b []int) int { return slices.Compare(a, b) })
				if !slices.Equal(loads, wl) || fmt.Sprint(bulks) != fmt.Sprint(wb) {
					d = fmt.Sprintf("loader calls: Load %v LoadMany %v; model Load %v LoadMany %v", loads, bulks, wl, wb)
				}
				wp := m.probes
				m.probes = nil
				slices.Sort(wp)
				if got := prober.take(); !slices.Equal(got, wp) {
					d = fmt.Sprintf("Probe calls %v; model %v", got, wp)
				}
			}
			if d == "" {
				s := c.Stats()
				s.Core = m.stats.Core
				if s != m.stats {
					d = fmt.Sprintf("Stats %+v; model %+v", s, m.stats)
				}
			}
			if i == n-1 {
				a := &modelTotals
				a.Hits += m.stats.Hits
				a.StaleHits += m.stats.StaleHits
				a.ErrorHits += m.stats.ErrorHits
				a.Misses += m.stats.Misses
				a.Shared += m.stats.Shared
				a.Loads += m.stats.Loads
				a.LoadErrors += m.stats.LoadErrors
				a.Refreshes += m.stats.Refreshes
				a.RefreshesSkipped += m.stats.RefreshesSkipped
			}
			if d != "" {
				div = fmt.Sprintf("step %d %v at t=%v: %s", i, op, time.Duration(m.now), d)
				return
			}
		}
		// Close cancels the loads in flight: each is a failed loader call.
		c.Close()
		for _, call := range m.calls {
			m.stats.Loads++
			m.stats.LoadErrors++
			m.stats.LoadTime += time.Duration(m.now - call.start)
		}
		var d string
		if v, err := c.Get(context.Background(), 0); v != "" || err != ErrClosed {
			d = fmt.Sprintf("Get after Close = %q, %v", v, err)
		} else if got, err := c.GetMany(context.Background(), []int{0, 1}); got != nil || err != ErrClosed {
			d = fmt.Sprintf("GetMany after Close = %v, %v", got, err)
		} else if c.Set(1, "x") {
			d = "Set after Close returned true"
		} else if st := c.Stats(); func() bool { st.Core = m.stats.Core; return st != m.stats }() {
			d = fmt.Sprintf("Stats after Close %+v; model %+v", st, m.stats)
		}
		if d != "" {
			div = fmt.Sprintf("after Close at t=%v: %s", time.Duration(m.now), d)
		}
	})
	return div, ran
}

// shrinkModel removes operations from ops while the run still diverges.
func shrinkModel(t *testing.T, cfg mConfig, seed uint64, ops []mOp) ([]mOp, string) {
	div, _ := runModel(t, cfg, seed, ops, 0)
	for changed := true; changed; {
		changed = false
		for i := len(ops) - 1; i >= 0; i-- {
			try := slices.Delete(slices.Clone(ops), i, i+1)
			if d, _ := runModel(t, cfg, seed, try, 0); d != "" {
				ops, div, changed = try, d, true
			}
		}
		for i := 0; i+1 < len(ops); i++ {
			if ops[i].kind == opAdvance && ops[i+1].kind == opAdvance {
				try := slices.Clone(ops)
				try[i].d += try[i+1].d
				try = slices.Delete(try, i+1, i+2)
				if d, _ := runModel(t, cfg, seed, try, 0); d != "" {
					ops, div, changed = try, d, true
					break
				}
			}
		}
	}
	return ops, div
}

// TestSequentialModel runs the model against the cache for many seeds
// (each picks the options and the operations; a failure names its seed and
// a shrunk sequence), and checks that the runs reached every kind of
// outcome the Stats count, so that the comparison covers them.
func TestSequentialModel(t *testing.T) {
	seeds, steps := 600, 150
	if testing.Short() {
		seeds = 100
	}
	modelTotals = Stats{}
	found := map[string]bool{}
	for s := range seeds {
		seed := uint64(s + 1)
		cfg := randomConfig(seed)
		div, ran := runModel(t, cfg, seed, nil, steps)
		if div == "" {
			continue
		}
		ops, sdiv := shrinkModel(t, cfg, seed, ran)
		var b strings.Builder
		for _, op := range ops {
			b.WriteString(op.String() + "; ")
		}
		// One report per kind of divergence.
		sig := sdiv[strings.Index(sdiv, ": ")+2:]
		sig = sig[:min(len(sig), 30)]
		if found[sig] {
			continue
		}
		found[sig] = true
		t.Errorf("seed %d, %v:\n  %s\n  minimal: %s\n  => %s", seed, cfg, div, b.String(), sdiv)
	}
	a := modelTotals
	for name, n := range map[string]uint64{"Hits": a.Hits, "StaleHits": a.StaleHits, "ErrorHits": a.ErrorHits, "Misses": a.Misses,
		"Shared": a.Shared, "Loads": a.Loads, "LoadErrors": a.LoadErrors, "Refreshes": a.Refreshes, "RefreshesSkipped": a.RefreshesSkipped} {
		if n == 0 {
			t.Errorf("no run counted any %s: the model test no longer reaches that outcome", name)
		}
	}
	t.Logf("totals over %d seeds: %+v", seeds, a)
}

// modelTotals adds up the model's Stats at the end of every run.
var modelTotals Stats
