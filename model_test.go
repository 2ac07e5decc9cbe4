package cachekit

import (
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzModel is a model-based test: the fuzz input is decoded into a
// configuration and a sequence of operations over a few int keys, applied
// single-threaded both to a Cache on a fake clock and to a model (a map of
// the values the cache may hold, with their deadlines), and every result is
// checked against the model. Under plain go test it runs its seeds: a few
// hand-written inputs aimed at edge cases, and long inputs drawn from PCG
// with fixed seeds (logged with -v).
//
// Input layout: three configuration bytes (fmDecodeConfig: the bound,
// DefaultTTL, TTLJitter, the key hash, the number of keys, OnEvict or not,
// the value type), then one operation per opcode byte (fmOps: Set,
// SetWithTTL, Get, Peek, Delete, Clear, GetMany, SetMany, Len, a clock
// advance, settle, All, Stats) followed by its argument bytes. After every
// operation Len is checked; every 16 operations, and at the end, the cache's
// internal invariants are checked (checkInvariants), every key is peeked,
// and the timer wheel's size is checked. At the end the cache is cleared and
// settled, and every value ever stored must have been reported to OnEvict
// exactly once. Stats must match the model whenever Stats runs: hits and
// misses exactly, Sets, and (with OnEvict) every removal counter.
//
// The cache is closed right after New, so that its background goroutine
// never runs: maintenance then only happens inside the test's calls, and
// every OnEvict callback runs on the test's goroutine during the call that
// removed the entry. With OnEvict configured the model is exact ("strict"):
// it knows which stored values are still in the index (those not reported
// yet), so even for a bounded cache a lookup must find every live value not
// reported as evicted, and every report must have a plausible cause
// (replaced: by a Set of the key; deleted: by Delete; cleared: by Clear;
// expired: only after the deadline; capacity: only in a bounded cache and
// never for an expired value). Without OnEvict (one configuration in eight),
// a bounded cache may miss any value; a miss then drops the key from the
// model (an evicted value must never come back).
//
// Values are unique (a counter shifted left by 3, with a weight class in the
// low 3 bits), so a stale, overwritten, deleted or expired value can never be
// mistaken for the current one. The cache's value type is uint64, string,
// *uint64 or a 6-byte struct, since word-sized values are replaced in place
// and others are not.
//
// A failure prints the configuration and the last 64 operations. Checks of
// known bugs are off unless asked for (fmCheckReportOrder).
func FuzzModel(f *testing.F) {
	for _, s := range fmHandSeeds() {
		f.Add(s)
	}
	for i, cfg := range fmLongSeedConfigs {
		seed := fmLongSeedBase + uint64(i)
		f.Logf("long seed %d: %d bytes, config % x (%v), then bytes from rand.NewPCG(%#x, %d)",
			i, fmLongSeedLen, cfg, fmDecodeConfig(cfg[0], cfg[1], cfg[2]), uint64(fmLongSeedBase), seed)
		f.Add(fmLongSeed(cfg, seed))
	}
	for i := range PolicyNames() {
		cfg := fmPolicySeedConfig(i + 1)
		seed := fmLongSeedBase + 100 + uint64(i)
		f.Logf("policy seed %d: %d bytes, config % x (%v), then bytes from rand.NewPCG(%#x, %d)",
			i, fmLongSeedLen, cfg, fmDecodeConfig(cfg[0], cfg[1], cfg[2]), uint64(fmLongSeedBase), seed)
		f.Add(fmLongSeed(cfg, seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fmRun(t, data)
	})
}

// Long deterministic seeds: their configuration bytes are fixed (to cover
// every bound and TTL variant), their operations drawn from PCG.
const (
	fmLongSeedBase = 0x6d6f64656c // "model"
	fmLongSeedLen  = 4000
)

var fmLongSeedConfigs = [][3]byte{
	{0, 0x00, 0x00}, {8, 0x02, 0x08}, {0, 0x2b, 0x11}, {1, 0x00, 0x18},
	{2, 0x41, 0x00}, {3, 0x00, 0x08}, {11, 0x1a, 0x10}, {4, 0x00, 0x18},
	{12, 0x42, 0x00}, {5, 0x00, 0x10}, {6, 0x63, 0x08}, {3, 0x40, 0x07},
	{0, 0x01, 0x1f}, {4, 0x08, 0x0f}, {18, 0x40, 0x00}, {17, 0x2d, 0x18},
	{7, 0x00, 0x00}, {7, 0x22, 0x10}, {23, 0x02, 0x08}, {2, 0x1e, 0x08},
	{7, 0x00, 0x07}, {4, 0x02, 0x00},
}

// fmPolicySeedConfig returns configuration bytes for a bounded cache with
// policy i (see fmDecodeConfig), varying the other settings with i.
func fmPolicySeedConfig(i int) [3]byte {
	b0 := byte(1+i%7) | byte(i&1)<<3 // every bound; 8 or 16 keys
	b1 := byte(i&1)<<7 | byte(i%3)   // DefaultTTL 0 or 1ms
	b2 := byte(i>>1)<<5 | byte(i%4)<<3
	return [3]byte{b0, b1, b2}
}

// fmLongSeed returns a seed input: cfg, then fmLongSeedLen-3 bytes from PCG.
func fmLongSeed(cfg [3]byte, seed uint64) []byte {
	r := rand.New(rand.NewPCG(fmLongSeedBase, seed))
	b := make([]byte, fmLongSeedLen)
	copy(b, cfg[:])
	for i := 3; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// fmKind is a kind of operation.
type fmKind uint8

const (
	fmNone fmKind = iota
	fmSet
	fmSetTTL
	fmGet
	fmPeek
	fmDelete
	fmClear
	fmGetMany
	fmSetMany
	fmLen
	fmAdvance
	fmSettle
	fmAll
	fmStats
	fmCheck
	fmInCallback
)

var fmKindNames = [...]string{
	fmNone: "none", fmSet: "Set", fmSetTTL: "SetWithTTL", fmGet: "Get", fmPeek: "Peek",
	fmDelete: "Delete", fmClear: "Clear", fmGetMany: "GetMany", fmSetMany: "SetMany",
	fmLen: "Len", fmAdvance: "advance", fmSettle: "settle", fmAll: "All", fmStats: "Stats",
	fmCheck: "checkInvariants", fmInCallback: "OnEvict",
}

func (k fmKind) String() string { return fmKindNames[k] }

// maintains reports whether an operation may run the cache's maintenance
// (and so evict or expire entries).
func (k fmKind) maintains() bool {
	switch k {
	case fmSet, fmSetTTL, fmSetMany, fmDelete, fmGet, fmGetMany, fmClear, fmSettle, fmStats, fmCheck:
		return true
	}
	return false
}

// fmOps maps an opcode byte (mod 32) to an operation.
var fmOps = [32]fmKind{
	fmSet, fmSet, fmSet, fmSet, fmSet, fmSet,
	fmSetTTL, fmSetTTL, fmSetTTL, fmSetTTL,
	fmGet, fmGet, fmGet, fmGet, fmGet,
	fmPeek, fmPeek,
	fmDelete, fmDelete,
	fmClear,
	fmGetMany, fmGetMany,
	fmSetMany, fmSetMany,
	fmLen,
	fmAdvance, fmAdvance, fmAdvance, fmAdvance,
	fmSettle,
	fmAll,
	fmStats,
}

// fmTTLs are the TTLs of SetWithTTL (argument byte mod 10); the last two
// overflow the clock (TestModelHugeTTL).
var fmTTLs = [10]time.Duration{1, 2, time.Millisecond, 5 * time.Millisecond, time.Hour, 0, -1, 1 << 30,
	math.MaxInt64, math.MaxInt64 - 1<<50}

// Special clock advances.
const (
	fmToNextDeadline       = -1 // to the earliest deadline after now
	fmToBeforeNextDeadline = -2 // to 1ns before it
	fmToAfterNextDeadline  = -3 // to 1ns after it
)

// fmAdvances are the clock advances (argument byte mod 16).
var fmAdvances = [16]time.Duration{
	0, 1, 2,
	time.Millisecond - 1, time.Millisecond, 5*time.Millisecond - 1, 5 * time.Millisecond,
	time.Hour - 1, time.Hour,
	1 << 30, 1<<36 + 1, 1 << 42, 50 * 24 * time.Hour,
	fmToNextDeadline, fmToBeforeNextDeadline, fmToAfterNextDeadline,
}

// fmMaxNow bounds the fake clock (in ns since the cache's creation), far
// from overflow.
const fmMaxNow = 1 << 61

// fmMaxOps bounds the operations decoded from one input.
const fmMaxOps = 5000

// fmCheckReportOrder checks that, per key, values are reported to OnEvict
// in the order they left the cache (the model is single-threaded, so one
// goroutine reports everything, in order).
const fmCheckReportOrder = true

// fmWatchdog bounds the time one input may take.
const fmWatchdog = 60 * time.Second

// fmBatch is the number of operations between invariant checks.
const fmBatch = 16

// fmConfig is a cache configuration.
type fmConfig struct {
	maxEntries int
	maxWeight  uint64
	weights    [8]uint32 // by weight class, with maxWeight
	defaultTTL time.Duration
	jitter     float64
	fixedRand  bool // jitter's random source cycles through fmRandoms
	hasher     int  // index in fmHashers
	nkeys      int
	initialCap int
	onEvict    bool
	valueType  int    // index in fmValueTypes
	policy     string // Options.Policy
}

var fmBounds = [8]struct {
	entries int
	weight  uint64
}{{0, 0}, {1, 0}, {3, 0}, {8, 0}, {0, 10}, {0, 1}, {0, 40}, {48, 0}}

// fmManyKeys is the key space of a cache of fmBounds[7], large enough to
// exceed its bound (and whose writers run maintenance only every few
// writes).
const fmManyKeys = 64

var fmHashers = [4]func(int) uint64{
	nil, // maphash
	func(k int) uint64 { return uint64(k) * 0x9e3779b97f4a7c15 },
	func(int) uint64 { return 42 },                              // every key collides
	func(k int) uint64 { return uint64(k%3)<<62 | uint64(k%2) }, // three segments, two probe starts
}

var fmHasherNames = [4]string{"maphash", "multiplicative", "constant", "clustered"}

var fmRandoms = [...]float64{0, 0.5, math.Nextafter(1, 0), 0.25, 0.999, 0.001}

// fmDecodeConfig decodes the three configuration bytes:
//
//	b0 % 8: bound (unbounded, MaxEntries 1/3/8, MaxWeight 10/1/40, MaxEntries 48)
//	b0/8 % 2: 8 or 16 keys (fmManyKeys for MaxEntries 48); b0/16 % 2: InitialCapacity 0 or 1000
//	b1 bits 0-1: DefaultTTL 0, 0, 1ms, 1h; bits 2-3: TTLJitter 0, 0, 0.1, 0.9
//	b1 bit 4: fixed jitter randoms; bits 5-6: hasher
//	b2 % 8 == 7: no OnEvict; b2 bits 3-4: value type (fmValueTypes)
//	b2 bits 5-7 and b1 bit 7: policy of a bounded cache, i = b2>>5<<1 | b1>>7:
//	    the default for 0, else PolicyNames()[(i-1) % len(PolicyNames())]
func fmDecodeConfig(b0, b1, b2 byte) fmConfig {
	bound := fmBounds[b0%8]
	cfg := fmConfig{
		maxEntries: bound.entries,
		maxWeight:  bound.weight,
		nkeys:      []int{8, 16}[b0/8%2],
		initialCap: []int{0, 1000}[b0/16%2],
		defaultTTL: []time.Duration{0, 0, time.Millisecond, time.Hour}[b1&3],
		jitter:     []float64{0, 0, 0.1, 0.9}[b1>>2&3],
		fixedRand:  b1>>4&1 == 1,
		hasher:     int(b1 >> 5 & 3),
		onEvict:    b2%8 != 7,
		valueType:  int(b2 >> 3 & 3),
	}
	if b0%8 == 7 {
		cfg.nkeys = fmManyKeys
	}
	if i := int(b2>>5)<<1 | int(b1>>7); i > 0 && cfg.bounded() {
		names := PolicyNames()
		cfg.policy = names[(i-1)%len(names)]
	}
	if m := cfg.maxWeight; m > 0 {
		w := uint32(m)
		cfg.weights = [8]uint32{0, 1, 2, 3, w / 2, w, w + 1, math.MaxUint32}
	}
	return cfg
}

func (c fmConfig) bounded() bool { return c.maxEntries > 0 || c.maxWeight > 0 }

func (c fmConfig) String() string {
	var b strings.Builder
	switch {
	case c.maxEntries > 0:
		fmt.Fprintf(&b, "MaxEntries %d", c.maxEntries)
	case c.maxWeight > 0:
		fmt.Fprintf(&b, "MaxWeight %d weights %v", c.maxWeight, c.weights)
	default:
		b.WriteString("unbounded")
	}
	if c.policy != "" {
		fmt.Fprintf(&b, ", Policy %q", c.policy)
	}
	fmt.Fprintf(&b, ", DefaultTTL %v, TTLJitter %v", c.defaultTTL, c.jitter)
	if c.fixedRand {
		b.WriteString(" (fixed randoms)")
	}
	fmt.Fprintf(&b, ", %d keys, %s hash, InitialCapacity %d, OnEvict %v, values %s",
		c.nkeys, fmHasherNames[c.hasher], c.initialCap, c.onEvict, fmValueTypes[c.valueType])
	return b.String()
}

// fmValueTypes names the cache's value types: the cache stores word-sized
// pointer-free values (uint64, fmSmall) and pointers in place, others
// (string) in immutable entries.
var fmValueTypes = [4]string{"uint64", "string", "*uint64", "fmSmall"}

// fmSmall is a pointer-free value type of 6 bytes and 2 of padding.
type fmSmall struct {
	A uint32
	B uint16
}

// fmCache is the cache under test, with values converted to and from the
// model's uint64 identities.
type fmCache interface {
	Set(k int, v uint64) bool
	SetWithTTL(k int, v uint64, ttl time.Duration) bool
	SetMany(m map[int]uint64) int
	Get(k int) (uint64, bool)
	Peek(k int) (uint64, bool)
	GetMany(keys []int) (map[int]uint64, []int)
	All() iter.Seq2[int, uint64]
	Delete(k int)
	Clear()
	Len() int
	Stats() Stats
	Close()
	settle()
	checkInvariants() error
	deadlineOf(k int) (time.Duration, bool)
	wheelLen() int
	setHasher(func(int) uint64)
	setRandom(func() float64)
}

// fmNewCache returns a cache configured by cfg, with the value type it
// names.
func fmNewCache(cfg fmConfig, clock Clock, onEvict func(int, uint64, Cause)) (fmCache, error) {
	switch cfg.valueType {
	case 1:
		return fmNewAdapter(cfg, clock, onEvict,
			func(v uint64) string { return strconv.FormatUint(v, 36) },
			func(s string) uint64 {
				v, _ := strconv.ParseUint(s, 36, 64)
				return v
			})
	case 2:
		return fmNewAdapter(cfg, clock, onEvict,
			func(v uint64) *uint64 { return &v },
			func(p *uint64) uint64 {
				if p == nil {
					return 0
				}
				return *p
			})
	case 3:
		return fmNewAdapter(cfg, clock, onEvict,
			func(v uint64) fmSmall { return fmSmall{uint32(v), uint16(v >> 32)} },
			func(s fmSmall) uint64 { return uint64(s.A) | uint64(s.B)<<32 })
	}
	return New(fmOptions(cfg, clock, onEvict, func(v uint64) uint64 { return v }))
}

func fmOptions[V any](cfg fmConfig, clock Clock, onEvict func(int, uint64, Cause), dec func(V) uint64) Options[int, V] {
	opts := Options[int, V]{
		MaxEntries:      cfg.maxEntries,
		MaxWeight:       cfg.maxWeight,
		DefaultTTL:      cfg.defaultTTL,
		TTLJitter:       cfg.jitter,
		InitialCapacity: cfg.initialCap,
		Clock:           clock,
		Policy:          cfg.policy,
	}
	if cfg.maxWeight > 0 {
		w := cfg.weights
		opts.Weigher = func(_ int, v V) uint32 { return w[dec(v)&7] }
	}
	if cfg.onEvict {
		opts.OnEvict = func(k int, v V, cause Cause) { onEvict(k, dec(v), cause) }
	}
	return opts
}

// fmAdapter adapts a Cache[int, V] to fmCache.
type fmAdapter[V any] struct {
	*Cache[int, V]
	enc func(uint64) V
	dec func(V) uint64
}

func fmNewAdapter[V any](cfg fmConfig, clock Clock, onEvict func(int, uint64, Cause), enc func(uint64) V, dec func(V) uint64) (fmCache, error) {
	c, err := New(fmOptions(cfg, clock, onEvict, dec))
	if err != nil {
		return nil, err
	}
	return fmAdapter[V]{c, enc, dec}, nil
}

func (a fmAdapter[V]) Set(k int, v uint64) bool { return a.Cache.Set(k, a.enc(v)) }

func (a fmAdapter[V]) SetWithTTL(k int, v uint64, ttl time.Duration) bool {
	return a.Cache.SetWithTTL(k, a.enc(v), ttl)
}

func (a fmAdapter[V]) SetMany(m map[int]uint64) int {
	mv := make(map[int]V, len(m))
	for k, v := range m {
		mv[k] = a.enc(v)
	}
	return a.Cache.SetMany(mv)
}

func (a fmAdapter[V]) Get(k int) (uint64, bool) {
	v, ok := a.Cache.Get(k)
	return a.dec(v), ok
}

func (a fmAdapter[V]) Peek(k int) (uint64, bool) {
	v, ok := a.Cache.Peek(k)
	return a.dec(v), ok
}

func (a fmAdapter[V]) GetMany(keys []int) (map[int]uint64, []int) {
	found, missing := a.Cache.GetMany(keys)
	m := make(map[int]uint64, len(found))
	for k, v := range found {
		m[k] = a.dec(v)
	}
	return m, missing
}

func (a fmAdapter[V]) All() iter.Seq2[int, uint64] {
	return func(yield func(int, uint64) bool) {
		for k, v := range a.Cache.All() {
			if !yield(k, a.dec(v)) {
				return
			}
		}
	}
}

// fmRec is one value offered to Set.
type fmRec struct {
	key      int
	val      uint64
	weight   uint32
	deadline int64 // in the cache's clock; 0: never expires
	inFlight bool  // its Set is running
	stored   bool  // its Set returned true
	reported bool  // OnEvict reported it
	cause    Cause
	setOp    int // operation number of its Set
	reportOp int // operation number of its report
}

func (r *fmRec) live(now int64) bool { return r.deadline == 0 || r.deadline > now }

// fmHarness runs one input.
type fmHarness struct {
	tb      testing.TB
	cfg     fmConfig
	c       fmCache
	clock   *fakeClock
	now     int64 // the cache's clock: ns since New
	strict  bool  // OnEvict is set: the model knows exactly what the index holds
	bounded bool

	// model holds, per key, the value the cache may hold for it. In strict
	// mode it holds exactly the stored values not yet reported to OnEvict.
	model  map[int]*fmRec
	recs   map[uint64]*fmRec // every value offered to Set
	nextID uint64

	op     fmKind           // operation running, for OnEvict's checks
	opNum  int              // its number
	opPrev map[int]*fmRec   // model[k] when it began, for the keys it names
	cbErr  string           // first error found by OnEvict
	byKey  map[int][]uint64 // values reported, per key, in report order

	hits, misses, stores uint64
	reports              uint64
	causes               [numCauses]uint64

	randIdx int
	trace   [64]string
	ntrace  int
}

// fmRun decodes and runs one input.
func fmRun(tb testing.TB, data []byte) {
	tb.Helper()
	var cfgb [3]byte
	copy(cfgb[:], data)
	h := fmNewHarness(tb, fmDecodeConfig(cfgb[0], cfgb[1], cfgb[2]))
	defer h.c.Close()
	// A hung cache would stall the fuzzer silently: crash instead, so the
	// input is saved.
	watchdog := time.AfterFunc(fmWatchdog, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("FuzzModel: one input ran for %v; last operations:\n%s\n%s", fmWatchdog, h.traceString(), buf))
	})
	defer watchdog.Stop()
	r := fmReader{data: data, i: min(3, len(data))}
	for n := 0; r.more() && n < fmMaxOps; n++ {
		h.step(&r)
		if h.strict {
			h.checkLen(h.c.Len())
		}
		if (n+1)%fmBatch == 0 {
			h.check()
		}
	}
	h.finish()
}

type fmReader struct {
	data []byte
	i    int
}

func (r *fmReader) more() bool { return r.i < len(r.data) }

func (r *fmReader) next() byte {
	if r.i >= len(r.data) {
		return 0
	}
	b := r.data[r.i]
	r.i++
	return b
}

func fmNewHarness(tb testing.TB, cfg fmConfig) *fmHarness {
	h := &fmHarness{
		tb:      tb,
		cfg:     cfg,
		clock:   newFakeClock(),
		strict:  cfg.onEvict,
		bounded: cfg.bounded(),
		model:   make(map[int]*fmRec),
		recs:    make(map[uint64]*fmRec),
		opPrev:  make(map[int]*fmRec),
		byKey:   make(map[int][]uint64),
		nextID:  1,
	}
	c, err := fmNewCache(cfg, h.clock, h.onEvict)
	if err != nil {
		tb.Fatalf("New(%v): %v", cfg, err)
	}
	// No background goroutine: maintenance and OnEvict run only inside
	// the test's own calls.
	c.Close()
	if fn := fmHashers[cfg.hasher]; fn != nil {
		c.setHasher(fn)
	}
	if cfg.fixedRand {
		c.setRandom(func() float64 {
			u := fmRandoms[h.randIdx%len(fmRandoms)]
			h.randIdx++
			return u
		})
	}
	h.c = c
	return h
}

// step decodes and runs one operation.
func (h *fmHarness) step(r *fmReader) {
	switch fmOps[r.next()%32] {
	case fmSet:
		k, wc := h.keyAndClass(r.next())
		h.set(k, wc, 0, false)
	case fmSetTTL:
		k, wc := h.keyAndClass(r.next())
		h.set(k, wc, fmTTLs[r.next()%10], true)
	case fmGet:
		h.get(h.key(r.next()))
	case fmPeek:
		h.peek(h.key(r.next()))
	case fmDelete:
		h.delete(h.key(r.next()))
	case fmClear:
		h.clear()
	case fmGetMany:
		keys := make([]int, 1+r.next()%4)
		for i := range keys {
			keys[i] = h.key(r.next())
		}
		h.getMany(keys)
	case fmSetMany:
		n := 1 + r.next()%4
		keys := make([]int, 0, n)
		classes := make(map[int]uint8, n)
		for range n {
			k, wc := h.keyAndClass(r.next())
			if _, dup := classes[k]; !dup {
				keys = append(keys, k)
			}
			classes[k] = wc
		}
		h.setMany(keys, classes)
	case fmLen:
		h.length()
	case fmAdvance:
		h.advance(fmAdvances[r.next()%16])
	case fmSettle:
		h.settle()
	case fmAll:
		b := r.next()
		limit := -1
		if b%4 == 0 {
			limit = 1 + int(b>>2)%3
		}
		h.all(limit)
	case fmStats:
		h.stats()
	}
}

func (h *fmHarness) key(b byte) int { return int(b) % h.cfg.nkeys }

func (h *fmHarness) keyAndClass(b byte) (int, uint8) {
	return h.key(b), uint8(int(b) / h.cfg.nkeys % 8)
}

// record adds an operation to the trace printed on failure.
func (h *fmHarness) record(desc string) {
	h.trace[h.ntrace%len(h.trace)] = fmt.Sprintf("#%d %s", h.opNum, desc)
	h.ntrace++
}

func (h *fmHarness) traceString() string {
	var b strings.Builder
	for i := max(0, h.ntrace-len(h.trace)); i < h.ntrace; i++ {
		fmt.Fprintf(&b, "\t%s\n", h.trace[i%len(h.trace)])
	}
	return b.String()
}

func (h *fmHarness) fail(format string, args ...any) {
	h.tb.Helper()
	h.tb.Fatalf("%s\nconfig: %v\nclock: %v since New\nlast operations (oldest first):\n%s",
		fmt.Sprintf(format, args...), h.cfg, time.Duration(h.now), h.traceString())
}

// begin starts operation kind on keys; end finishes it and fails on an
// error that OnEvict found meanwhile.
func (h *fmHarness) begin(kind fmKind, desc string, keys ...int) {
	h.opNum++
	h.op = kind
	clear(h.opPrev)
	for _, k := range keys {
		h.opPrev[k] = h.model[k]
	}
	h.record(desc)
}

func (h *fmHarness) end() {
	h.tb.Helper()
	h.op = fmNone
	if h.cbErr != "" {
		h.fail("%s", h.cbErr)
	}
}

// val describes value v with what the model knows of it.
func (h *fmHarness) val(v uint64) string {
	r := h.recs[v]
	if r == nil {
		return fmt.Sprintf("%#x (never set)", v)
	}
	s := fmt.Sprintf("v%d", v>>3)
	if h.cfg.maxWeight > 0 {
		s += fmt.Sprintf("/w%d", r.weight)
	}
	return s
}

// describe describes r's history.
func (h *fmHarness) describe(r *fmRec) string {
	if r == nil {
		return "nothing"
	}
	s := fmt.Sprintf("%s (key %d, set by #%d", h.val(r.val), r.key, r.setOp)
	if r.deadline != 0 {
		s += fmt.Sprintf(", deadline %v", time.Duration(r.deadline))
		if !r.live(h.now) {
			s += " (expired)"
		}
	}
	switch {
	case r.reported:
		s += fmt.Sprintf(", reported %v by #%d", r.cause, r.reportOp)
	case !r.stored && !r.inFlight:
		s += ", refused by Set"
	}
	return s + ")"
}

func (h *fmHarness) valueOf(k int, wc uint8) *fmRec {
	r := &fmRec{key: k, val: h.nextID<<3 | uint64(wc), weight: 1}
	h.nextID++
	if h.cfg.maxWeight > 0 {
		r.weight = h.cfg.weights[wc]
	}
	h.recs[r.val] = r
	return r
}

// refused reports whether Set must refuse r.
func (h *fmHarness) refused(r *fmRec) bool {
	return h.cfg.maxWeight > 0 && uint64(r.weight) > h.cfg.maxWeight
}

func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// floatNanos converts a non-negative float64 to int64, saturating.
func floatNanos(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(f)
}

// deadlineBand returns the range of deadlines of an entry written now with
// ttl: exact without jitter (whatever the TTL), otherwise ttl×(1±jitter/2)
// with 1ns slack (more for TTLs beyond float64's exact range, which the
// jitter computes in).
func (h *fmHarness) deadlineBand(ttl time.Duration) (lo, hi int64) {
	if ttl <= 0 {
		return 0, 0
	}
	j := h.cfg.jitter
	if j == 0 {
		d := satAdd(h.now, int64(ttl))
		return d, d
	}
	slack := int64(ttl>>50) + 1
	lo = max(floatNanos(float64(ttl)*(1-j/2))-slack, 1)
	hi = max(satAdd(floatNanos(math.Ceil(float64(ttl)*(1+j/2))), slack), 1)
	return satAdd(h.now, lo), satAdd(h.now, hi)
}

// set runs Set(k, v) (SetWithTTL if withTTL) for a new value of class wc.
func (h *fmHarness) set(k int, wc uint8, ttl time.Duration, withTTL bool) {
	h.tb.Helper()
	r := h.valueOf(k, wc)
	eff := h.cfg.defaultTTL
	if withTTL {
		eff = ttl
	}
	lo, hi := h.deadlineBand(eff)
	r.deadline, r.inFlight = lo, true
	var ok bool
	if withTTL {
		h.begin(fmSetTTL, fmt.Sprintf("SetWithTTL(%d, %s, %v)", k, h.val(r.val), ttl), k)
		r.setOp = h.opNum
		ok = h.c.SetWithTTL(k, r.val, ttl)
	} else {
		h.begin(fmSet, fmt.Sprintf("Set(%d, %s)", k, h.val(r.val)), k)
		r.setOp = h.opNum
		ok = h.c.Set(k, r.val)
	}
	h.end()
	r.inFlight = false
	if ok == h.refused(r) {
		h.fail("Set(%d, %s) of weight %d (MaxWeight %d) returned %v", k, h.val(r.val), r.weight, h.cfg.maxWeight, ok)
	}
	h.afterStore(r, ok, h.opPrev[k], lo, hi)
}

// afterStore checks the cache after the Set of r returned ok; prev is
// what the model held for the key before.
func (h *fmHarness) afterStore(r *fmRec, ok bool, prev *fmRec, lo, hi int64) {
	h.tb.Helper()
	k := r.key
	if !ok {
		if r.reported {
			h.fail("refused value %s was reported to OnEvict", h.describe(r))
		}
		// The old value must still be there.
		v, found := h.c.Peek(k)
		h.checkLookup("Peek after a refused Set", k, prev, v, found)
		return
	}
	h.stores++
	r.stored = true
	if h.strict && prev != nil && !prev.reported {
		h.fail("Set(%d, %s) replaced %s but OnEvict did not report it", k, h.val(r.val), h.describe(prev))
	}
	d, found := h.c.deadlineOf(k)
	switch {
	case h.strict && r.reported:
		// Evicted by the maintenance its own Set ran.
		if found {
			h.fail("Set(%d, %s): the value was reported %v, yet the index holds an entry for the key", k, h.val(r.val), r.cause)
		}
		return
	case !found:
		if h.strict || !h.bounded {
			h.fail("Set(%d, %s) returned true, but the index holds no entry for the key", k, h.val(r.val))
		}
		delete(h.model, k)
		return
	}
	if hi == math.MaxInt64 && d == 0 {
		// A TTL beyond the clock's range may mean "never expires".
	} else if int64(d) < lo || int64(d) > hi {
		h.fail("Set(%d, %s) at %v: deadline %v (%d), want in [%d, %d] (DefaultTTL %v, jitter %v)",
			k, h.val(r.val), time.Duration(h.now), d, int64(d), lo, hi, h.cfg.defaultTTL, h.cfg.jitter)
	}
	r.deadline = int64(d)
	h.model[k] = r
	if v, ok := h.c.Peek(k); !ok || v != r.val {
		h.fail("Peek(%d) right after Set(%d, %s) = %s, %v", k, k, h.val(r.val), h.val(v), ok)
	}
}

// setMany runs SetMany with new values of the given classes for keys.
func (h *fmHarness) setMany(keys []int, classes map[int]uint8) {
	h.tb.Helper()
	m := make(map[int]uint64, len(keys))
	rs := make([]*fmRec, len(keys))
	lo, hi := h.deadlineBand(h.cfg.defaultTTL)
	want := 0
	var desc strings.Builder
	desc.WriteString("SetMany({")
	for i, k := range keys {
		r := h.valueOf(k, classes[k])
		r.deadline, r.inFlight = lo, true
		rs[i] = r
		m[k] = r.val
		if !h.refused(r) {
			want++
		}
		if i > 0 {
			desc.WriteString(", ")
		}
		fmt.Fprintf(&desc, "%d: %s", k, h.val(r.val))
	}
	desc.WriteString("})")
	h.begin(fmSetMany, desc.String(), keys...)
	for _, r := range rs {
		r.setOp = h.opNum
	}
	got := h.c.SetMany(m)
	h.end()
	for _, r := range rs {
		r.inFlight = false
	}
	if got != want {
		h.fail("%s stored %d values, want %d", desc.String(), got, want)
	}
	for _, r := range rs {
		h.afterStore(r, !h.refused(r), h.opPrev[r.key], lo, hi)
	}
}

// checkLookup checks that a lookup of k that returned (v, ok) agrees with
// prev, the model's value for k before the lookup.
func (h *fmHarness) checkLookup(what string, k int, prev *fmRec, v uint64, ok bool) {
	h.tb.Helper()
	live := prev != nil && prev.live(h.now)
	if ok {
		if !live || v != prev.val {
			want := "a miss"
			if live {
				want = h.describe(prev)
			}
			got := h.val(v)
			if r := h.recs[v]; r != nil {
				got = h.describe(r)
			}
			h.fail("%s(%d) = %s, want %s", what, k, got, want)
		}
		return
	}
	if !live {
		return
	}
	switch {
	case h.strict && !prev.reported:
		h.fail("%s(%d) missed %s, which is live and was never reported to OnEvict", what, k, h.describe(prev))
	case !h.bounded:
		h.fail("%s(%d) missed %s in an unbounded cache", what, k, h.describe(prev))
	}
	// Evicted: it must never come back.
	if h.model[k] == prev {
		delete(h.model, k)
	}
}

func (h *fmHarness) get(k int) {
	h.tb.Helper()
	h.begin(fmGet, fmt.Sprintf("Get(%d)", k), k)
	v, ok := h.c.Get(k)
	h.end()
	if ok {
		h.hits++
	} else {
		h.misses++
	}
	h.checkLookup("Get", k, h.opPrev[k], v, ok)
}

func (h *fmHarness) peek(k int) {
	h.tb.Helper()
	h.begin(fmPeek, fmt.Sprintf("Peek(%d)", k), k)
	v, ok := h.c.Peek(k)
	h.end()
	h.checkLookup("Peek", k, h.opPrev[k], v, ok)
}

func (h *fmHarness) getMany(keys []int) {
	h.tb.Helper()
	desc := fmt.Sprintf("GetMany(%v)", keys)
	h.begin(fmGetMany, desc, keys...)
	found, missing := h.c.GetMany(keys)
	h.end()
	h.hits += uint64(len(keys) - len(missing))
	h.misses += uint64(len(missing))
	// missing must be a subsequence of keys.
	i := 0
	for _, k := range missing {
		for i < len(keys) && keys[i] != k {
			i++
		}
		if i == len(keys) {
			h.fail("%s: missing = %v is not a subsequence of the keys", desc, missing)
		}
		i++
	}
	for k := range found {
		if !slices.Contains(keys, k) {
			h.fail("%s found key %d, which it was not asked for", desc, k)
		}
	}
	for _, k := range keys {
		v, ok := found[k]
		nk, nm := fmCount(keys, k), fmCount(missing, k)
		switch {
		case ok && nm == nk:
			h.fail("%s: key %d is both found (%s) and missing for each of its %d occurrences", desc, k, h.val(v), nk)
		case !ok && nm != nk:
			h.fail("%s: key %d occurs %d times, missing %d times, and is not found", desc, k, nk, nm)
		}
		prev := h.opPrev[k]
		h.checkLookup("GetMany", k, prev, v, ok)
		if ok && nm > 0 {
			// Found, then missed: it must have been evicted between.
			h.checkLookup("GetMany (a later occurrence)", k, prev, 0, false)
		}
	}
}

func fmCount(s []int, k int) int {
	n := 0
	for _, x := range s {
		if x == k {
			n++
		}
	}
	return n
}

func (h *fmHarness) delete(k int) {
	h.tb.Helper()
	h.begin(fmDelete, fmt.Sprintf("Delete(%d)", k), k)
	h.c.Delete(k)
	h.end()
	prev := h.opPrev[k]
	if h.strict && prev != nil && !prev.reported {
		h.fail("Delete(%d) removed %s but OnEvict did not report it", k, h.describe(prev))
	}
	delete(h.model, k)
	if v, ok := h.c.Peek(k); ok {
		h.fail("Peek(%d) after Delete(%d) = %s", k, k, h.val(v))
	}
}

func (h *fmHarness) clear() {
	h.tb.Helper()
	h.begin(fmClear, "Clear()")
	h.c.Clear()
	h.end()
	if h.strict {
		for _, r := range h.model {
			h.fail("Clear() did not report %s", h.describe(r))
		}
	}
	clear(h.model)
	if n := h.c.Len(); n != 0 {
		h.fail("Len() = %d after Clear()", n)
	}
}

// liveCount returns the number of live values in the model.
func (h *fmHarness) liveCount() int {
	n := 0
	for _, r := range h.model {
		if r.live(h.now) {
			n++
		}
	}
	return n
}

func (h *fmHarness) length() {
	h.tb.Helper()
	h.begin(fmLen, "Len()")
	n := h.c.Len()
	h.end()
	h.checkLen(n)
}

func (h *fmHarness) checkLen(n int) {
	h.tb.Helper()
	switch {
	case h.strict:
		if n != len(h.model) {
			h.fail("Len() = %d, want %d (stored values not reported to OnEvict, %d of them live)", n, len(h.model), h.liveCount())
		}
	case !h.bounded:
		if live := h.liveCount(); n < live || n > len(h.model) {
			h.fail("Len() = %d, want between %d (live) and %d (live and expired)", n, live, len(h.model))
		}
	default:
		if n > len(h.model) {
			h.fail("Len() = %d, but at most %d values can be in the cache", n, len(h.model))
		}
	}
}

// nextDeadline returns the earliest deadline after now in the model.
func (h *fmHarness) nextDeadline() (int64, bool) {
	d, ok := int64(math.MaxInt64), false
	for _, r := range h.model {
		if r.deadline > h.now && r.deadline < d {
			d, ok = r.deadline, true
		}
	}
	return d, ok
}

func (h *fmHarness) advance(d time.Duration) {
	if mode := d; mode < 0 {
		next, ok := h.nextDeadline()
		if !ok {
			next = h.now + int64(time.Millisecond)
		}
		d = time.Duration(next - h.now)
		switch mode {
		case fmToBeforeNextDeadline:
			d--
		case fmToAfterNextDeadline:
			d++
		}
	}
	if d > fmMaxNow-time.Duration(h.now) {
		d = 0
	}
	h.begin(fmAdvance, fmt.Sprintf("advance(%v) to %v", d, time.Duration(h.now)+d))
	h.clock.Advance(d)
	h.now += int64(d)
	h.end()
}

func (h *fmHarness) settle() {
	h.tb.Helper()
	h.begin(fmSettle, "settle()")
	h.c.settle()
	h.end()
	h.afterSettle()
	h.stats()
}

// afterSettle checks what must hold once maintenance has run: expired
// entries are reclaimed and the bound holds.
func (h *fmHarness) afterSettle() {
	h.tb.Helper()
	n := h.c.Len()
	if h.strict {
		for _, r := range h.model {
			if !r.live(h.now) {
				h.fail("after maintenance, expired %s is still in the cache", h.describe(r))
			}
		}
	} else if !h.bounded {
		if live := h.liveCount(); n != live {
			h.fail("after maintenance, Len() = %d, want %d (live values)", n, live)
		}
	}
	h.checkLen(n)
	if h.cfg.maxEntries > 0 && n > h.cfg.maxEntries {
		h.fail("after maintenance, Len() = %d > MaxEntries %d", n, h.cfg.maxEntries)
	}
}

func (h *fmHarness) stats() {
	h.tb.Helper()
	h.begin(fmStats, "Stats()")
	s := h.c.Stats()
	h.end()
	if s.Hits != h.hits || s.Misses != h.misses {
		h.fail("Stats: Hits %d, Misses %d; want %d, %d", s.Hits, s.Misses, h.hits, h.misses)
	}
	if s.Sets != h.stores {
		h.fail("Stats: Sets %d, want %d", s.Sets, h.stores)
	}
	if n := h.c.Len(); s.Entries != n {
		h.fail("Stats: Entries %d, Len() %d", s.Entries, n)
	}
	removed := s.Evicted + s.Expired + s.Deleted + s.Replaced + s.Cleared
	if s.Sets != removed+uint64(s.Entries) {
		h.fail("Stats: Sets %d != removed %d + Entries %d (%+v)", s.Sets, removed, s.Entries, s)
	}
	if !h.bounded && (s.Evicted != 0 || s.Weight != uint64(s.Entries)) {
		h.fail("Stats of an unbounded cache: Evicted %d, Weight %d, Entries %d", s.Evicted, s.Weight, s.Entries)
	}
	if h.cfg.maxEntries > 0 && s.Weight > uint64(h.cfg.maxEntries) {
		h.fail("Stats: Weight %d > MaxEntries %d", s.Weight, h.cfg.maxEntries)
	}
	if h.cfg.maxWeight > 0 && s.Weight > h.cfg.maxWeight {
		h.fail("Stats: Weight %d > MaxWeight %d", s.Weight, h.cfg.maxWeight)
	}
	if !h.strict {
		return
	}
	want := [numCauses]uint64{
		CauseCapacity: s.Evicted, CauseExpired: s.Expired, CauseDeleted: s.Deleted,
		CauseReplaced: s.Replaced, CauseCleared: s.Cleared,
	}
	if want != h.causes {
		h.fail("Stats count removals %v by cause (capacity, expired, deleted, replaced, cleared), OnEvict reported %v", want, h.causes)
	}
	if s.Entries != len(h.model) {
		h.fail("Stats: Entries %d, want %d", s.Entries, len(h.model))
	}
	if h.bounded {
		var w uint64
		for _, r := range h.model {
			w += uint64(r.weight)
		}
		if s.Weight != w {
			h.fail("Stats: Weight %d, want %d (the unreported values' weights)", s.Weight, w)
		}
	}
}

// all iterates over All, stopping after limit pairs if limit >= 0.
func (h *fmHarness) all(limit int) {
	h.tb.Helper()
	h.begin(fmAll, fmt.Sprintf("All() (limit %d)", limit))
	var keys []int
	var vals []uint64
	for k, v := range h.c.All() {
		keys = append(keys, k)
		vals = append(vals, v)
		if len(keys) == limit {
			break
		}
	}
	h.end()
	if limit >= 0 && len(keys) > limit {
		h.fail("All() yielded %d pairs after the loop broke at %d", len(keys), limit)
	}
	seen := make(map[int]bool, len(keys))
	for i, k := range keys {
		if seen[k] {
			h.fail("All() yielded key %d twice", k)
		}
		seen[k] = true
		h.checkLookup("All", k, h.model[k], vals[i], true)
	}
	if limit >= 0 {
		return
	}
	for k := 0; k < h.cfg.nkeys; k++ {
		if !seen[k] {
			h.checkLookup("All", k, h.model[k], 0, false)
		}
	}
}

// check runs checkInvariants and peeks at every key.
func (h *fmHarness) check() {
	h.tb.Helper()
	h.begin(fmCheck, "checkInvariants()")
	err := h.c.checkInvariants()
	h.end()
	if err != nil {
		h.fail("checkInvariants: %v", err)
	}
	h.afterSettle()
	for k := 0; k < h.cfg.nkeys; k++ {
		v, ok := h.c.Peek(k)
		h.checkLookup("Peek", k, h.model[k], v, ok)
	}
	if h.strict {
		timed := 0
		for _, r := range h.model {
			if r.deadline != 0 {
				timed++
			}
		}
		if n := h.c.wheelLen(); n != timed {
			h.fail("the timer wheel holds %d entries, want %d (values with a deadline)", n, timed)
		}
	}
}

// finish checks, clears and settles the cache, then checks that every
// stored value was reported exactly once.
func (h *fmHarness) finish() {
	h.tb.Helper()
	h.check()
	h.stats()
	h.clear()
	h.settle()
	h.check()
	if !h.strict {
		return
	}
	if h.reports != h.stores {
		h.fail("after Clear: OnEvict called %d times, %d values stored", h.reports, h.stores)
	}
	for _, r := range h.recs {
		if r.stored != r.reported {
			h.fail("after Clear: %s stored %v, reported %v", h.describe(r), r.stored, r.reported)
		}
	}
}

// onEvict is the cache's OnEvict: it checks the report against the model.
func (h *fmHarness) onEvict(k int, v uint64, cause Cause) {
	h.reports++
	bad := func(format string, args ...any) {
		if h.cbErr == "" {
			h.cbErr = fmt.Sprintf("OnEvict(%d, %s, %v) during %v: ", k, h.val(v), cause, h.op) + fmt.Sprintf(format, args...)
		}
	}
	if cause >= numCauses {
		bad("unknown cause")
		return
	}
	h.causes[cause]++
	r := h.recs[v]
	switch {
	case r == nil:
		bad("the value was never set")
		return
	case r.key != k:
		bad("the value was set for key %d", r.key)
		return
	case !r.stored && !r.inFlight:
		bad("the value was refused by Set")
		return
	case r.reported:
		bad("reported twice, first as %v by #%d", r.cause, r.reportOp)
		return
	}
	r.reported, r.cause, r.reportOp = true, cause, h.opNum
	if prev := h.byKey[k]; len(prev) > 0 && prev[len(prev)-1] > v && fmCheckReportOrder {
		bad("reported after %s, a later value of the key", h.describe(h.recs[prev[len(prev)-1]]))
	}
	h.byKey[k] = append(h.byKey[k], v)
	if h.model[k] == r {
		delete(h.model, k)
	}
	expired := !r.live(h.now)
	switch cause {
	case CauseCapacity:
		switch {
		case !h.bounded:
			bad("capacity eviction in an unbounded cache")
		case expired:
			bad("the value had expired (%s): the cause should be expired", h.describe(r))
		case !h.op.maintains():
			bad("this operation does not run maintenance")
		}
	case CauseExpired:
		switch {
		case !expired:
			bad("the value has not expired: %s", h.describe(r))
		case !h.op.maintains():
			bad("this operation does not run maintenance")
		}
	case CauseDeleted:
		switch {
		case h.op != fmDelete || h.opPrev[k] != r:
			bad("not removed by a Delete of that value (%s)", h.describe(r))
		case expired:
			bad("the value had expired (%s): the cause should be expired", h.describe(r))
		}
	case CauseReplaced:
		switch {
		case h.op != fmSet && h.op != fmSetTTL && h.op != fmSetMany || h.opPrev[k] != r:
			bad("not replaced by a Set of its key (%s)", h.describe(r))
		case expired:
			bad("the value had expired (%s): the cause should be expired", h.describe(r))
		}
	case CauseCleared:
		if h.op != fmClear {
			bad("not removed by Clear")
		}
	}
	// OnEvict may call the cache: a reported value is gone from it.
	op := h.op
	h.op = fmInCallback
	if pv, ok := h.c.Peek(k); ok && pv == v {
		bad("Peek(%d) in the callback still finds the value", k)
	}
	h.op = op
}

// fmCode returns the first opcode byte of kind.
func fmCode(kind fmKind) byte {
	i := slices.Index(fmOps[:], kind)
	if i < 0 {
		panic("no opcode for " + kind.String())
	}
	return byte(i)
}

// fmProg builds a fuzz input from three configuration bytes.
type fmProg []byte

// kc encodes key k and weight class wc for p's configuration.
func (p fmProg) kc(k, wc byte) byte {
	return wc*byte(fmDecodeConfig(p[0], p[1], p[2]).nkeys) + k
}

func (p fmProg) set(k, wc byte) fmProg { return append(p, fmCode(fmSet), p.kc(k, wc)) }

// setTTL appends SetWithTTL with fmTTLs[ttl].
func (p fmProg) setTTL(k, wc, ttl byte) fmProg {
	return append(p, fmCode(fmSetTTL), p.kc(k, wc), ttl)
}
func (p fmProg) get(k byte) fmProg  { return append(p, fmCode(fmGet), k) }
func (p fmProg) peek(k byte) fmProg { return append(p, fmCode(fmPeek), k) }
func (p fmProg) del(k byte) fmProg  { return append(p, fmCode(fmDelete), k) }
func (p fmProg) clear() fmProg      { return append(p, fmCode(fmClear)) }
func (p fmProg) getMany(keys ...byte) fmProg {
	return append(append(p, fmCode(fmGetMany), byte(len(keys)-1)), keys...)
}

// setMany appends SetMany of keys and weight classes, each as wc<<4 | k.
func (p fmProg) setMany(pairs ...byte) fmProg {
	p = append(p, fmCode(fmSetMany), byte(len(pairs)-1))
	for _, b := range pairs {
		p = append(p, p.kc(b&15, b>>4))
	}
	return p
}
func (p fmProg) length() fmProg { return append(p, fmCode(fmLen)) }

// adv appends an advance of fmAdvances[i].
func (p fmProg) adv(i byte) fmProg { return append(p, fmCode(fmAdvance), i) }
func (p fmProg) settle() fmProg    { return append(p, fmCode(fmSettle)) }
func (p fmProg) all() fmProg       { return append(p, fmCode(fmAll), 1) }
func (p fmProg) allFirst() fmProg  { return append(p, fmCode(fmAll), 0) }
func (p fmProg) stats() fmProg     { return append(p, fmCode(fmStats)) }

// fmFill appends Set(k) for k = 1..n-1, then Set(0).
func fmFill(p fmProg, n byte) fmProg {
	for k := byte(1); k <= n; k++ {
		p = p.set(k%n, 0)
	}
	return p
}

// fmHandSeeds returns small inputs aimed at edge cases.
func fmHandSeeds() [][]byte {
	seeds := [][]byte{
		{}, {0}, {5, 0x42, 0},
		// Unbounded: the basics.
		fmProg{0, 0, 0}.set(1, 0).get(1).peek(1).set(1, 0).get(1).del(1).get(1).
			getMany(1, 2, 1).setMany(2, 3, 0x12).length().all().clear().length().stats().get(2),
		// Expiry at the exact deadline: 1ms-1ns is live, 1ms is not.
		fmProg{0, 0, 0}.setTTL(1, 0, 2).setTTL(2, 0, 0).get(2).adv(1).get(2).adv(3).get(1).
			length().adv(1).get(1).peek(1).all().length().settle().length().setTTL(1, 0, 6).adv(12).get(1),
		// Jitter, and advances to just before, at and after the next deadline.
		fmProg{0, 0x0b, 0}.set(1, 0).set(2, 0).setTTL(3, 0, 3).adv(14).get(3).adv(13).get(3).
			adv(14).get(1).adv(13).get(1).get(2).settle().set(1, 0).adv(15).getMany(1, 2),
		fmProg{0, 0x1f, 0}.set(1, 0).set(2, 0).set(3, 0).set(4, 0).set(5, 0).setTTL(6, 0, 0).
			setTTL(7, 0, 1).adv(13).get(7).adv(13).adv(13).adv(13).adv(13).settle(),
		// Weights: an entry heavier than MaxWeight is refused and the old
		// value stays; weight 0 and weight MaxWeight are accepted.
		fmProg{4, 0, 0}.set(1, 1).set(1, 6).get(1).set(2, 5).settle().set(3, 0).set(4, 7).
			setMany(0x65, 0x26, 0x07).settle().stats().all().get(1).get(2).get(3).set(2, 4).set(5, 4).settle().stats(),
		fmProg{5, 0, 0}.set(1, 0).set(2, 0).set(3, 1).set(3, 2).get(3).set(4, 1).settle().stats().getMany(1, 2, 3, 4),
		// MaxEntries 1: churn.
		fmProg{1, 0, 0}.set(1, 0).set(2, 0).get(1).get(2).set(3, 0).settle().get(1).get(2).get(3).
			set(3, 0).set(3, 0).del(3).set(4, 0).settle().stats(),
		// Every key collides: probing, removals that move entries back, table rebuilds.
		fmProg{8, 0x40, 0}.set(0, 0).set(1, 0).set(2, 0).set(3, 0).set(4, 0).set(5, 0).set(6, 0).
			set(7, 0).set(8, 0).del(0).del(2).del(4).del(6).set(9, 0).set(10, 0).set(11, 0).
			set(12, 0).set(13, 0).set(14, 0).set(15, 0).del(9).set(9, 0).set(2, 0).all().length().
			getMany(0, 1, 2, 3, 4, 5),
		// Large clock jumps across the wheel's levels.
		fmProg{0, 0x03, 0}.set(1, 0).setTTL(2, 0, 7).setTTL(3, 0, 4).adv(10).get(1).get(2).get(3).
			adv(12).get(1).get(3).settle().set(4, 0).adv(11).adv(11).get(4).settle(),
		// TTLs beyond the clock's range.
		fmProg{0, 0, 0}.setTTL(1, 0, 8).setTTL(2, 0, 9).get(1).adv(12).get(1).get(2).settle().
			adv(8).get(1).setTTL(1, 0, 8).adv(10).get(1).get(2).all(),
		fmProg{0, 0x0c, 0}.setTTL(1, 0, 8).setTTL(2, 0, 9).setTTL(3, 0, 8).adv(12).get(1).get(2).get(3).settle(),
		// MaxEntries 48: writers run maintenance every 3 writes.
		fmProg{7, 0, 0}.set(0, 0).set(1, 0).set(2, 0).set(3, 0).set(4, 0).set(5, 0).set(6, 0).set(7, 0).
			set(8, 0).set(9, 0).set(10, 0).set(11, 0).set(12, 0).set(13, 0).set(14, 0).set(15, 0).length().
			getMany(0, 1, 2, 3).setMany(0x10, 0x11, 0x12, 0x13).length().settle().stats(),
		// TestModelInPlaceReportOrder's scenario: key 0 is the window's
		// candidate when Set(0) replaces its value in place and its access
		// finds the read buffer full (if the GetMany calls share a stripe
		// with it).
		fmFill(fmProg{7, 0, 0}, 48).set(50, 0).getMany(5, 5, 5, 5).getMany(5, 5, 5, 5).
			getMany(5, 5, 5, 5).getMany(5, 5, 5, 5).set(0, 0).get(0),
		// TestModelReportOrder's scenario.
		fmProg{4, 0x20, 0x08}.set(1, 1).set(1, 1).set(1, 1).set(2, 1).set(2, 5).get(1).get(2),
		// Bounded without OnEvict.
		fmProg{3, 0, 7}.set(0, 0).set(1, 0).set(2, 0).set(3, 0).set(4, 0).set(5, 0).set(6, 0).
			set(7, 0).get(0).get(0).get(1).set(0, 0).settle().all().length().stats(),
		// Clear with expired, unreclaimed entries.
		fmProg{3, 0x02, 0}.set(1, 0).set(2, 0).setTTL(3, 0, 5).adv(4).length().clear().length().stats(),
		// Delete and Set of expired entries.
		fmProg{0, 0x02, 0}.set(1, 0).set(2, 0).adv(4).del(1).set(2, 0).get(2).allFirst().stats(),
	}
	return seeds
}

// TestModelHugeTTL: a TTL near math.MaxInt64 (time.Duration(math.MaxInt64)
// is a common "forever") must not make the entry expire early. Found by
// FuzzModel with FUZZMODEL_HUGE_TTL=1.
func TestModelHugeTTL(t *testing.T) {
	for _, tc := range []struct {
		ttl    time.Duration
		jitter float64
	}{
		{math.MaxInt64, 0},         // float64(ttl) rounds up to 2^63; int64 of that overflows
		{math.MaxInt64 - 1<<40, 0}, // now + ttl overflows
		{1<<62 + 1<<61, 0.9},       // the jitter takes it past math.MaxInt64
	} {
		clock := newFakeClock()
		c := Must(Options[int, int]{Clock: clock, TTLJitter: tc.jitter})
		c.setRandom(func() float64 { return 0.99 })
		clock.Advance(time.Hour)
		c.SetWithTTL(1, 1, tc.ttl)
		d, _ := c.deadlineOf(1)
		clock.Advance(time.Second)
		if _, ok := c.Get(1); !ok {
			t.Errorf("TTLJitter %v: SetWithTTL(1, 1, %d) at 1h, then Get(1) at 1h0m1s misses: the deadline is %d (%v)",
				tc.jitter, int64(tc.ttl), int64(d), d)
		}
		c.Close()
	}
}

// TestModelReportOrder: OnEvict reports removals of the same key in the
// order they happened (the doc only lets removals of different keys be
// reported out of order). A Set that replaces a value runs maintenance
// before it reports the replaced value, so when that maintenance evicts the
// new value (here: heavier, and not admitted), OnEvict hears of the new
// value's eviction first and of the old value's replacement after, though
// the old value left the cache first. Found by FuzzModel with
// FUZZMODEL_REPORT_ORDER=1 (there through a Set that replaced a word-sized
// value in place and filled the read buffer).
func TestModelReportOrder(t *testing.T) {
	var log []string
	var vals []string // key 2's values, in report order
	c := Must(Options[int, string]{
		MaxWeight: 10,
		Weigher:   func(_ int, v string) uint32 { return uint32(len(v)) },
		OnEvict: func(k int, v string, cause Cause) {
			log = append(log, fmt.Sprintf("(%d, %q, %v)", k, v, cause))
			if k == 2 {
				vals = append(vals, v)
			}
		},
	})
	defer c.Close()
	c.setHasher(func(k int) uint64 { return uint64(k) * 0x9e3779b97f4a7c15 })
	c.Set(1, "a")
	c.Set(1, "b")
	c.Set(1, "c")          // key 1 is now more frequent than key 2 will be
	c.Set(2, "x")          // key 2's first value
	c.Set(2, "yyyyyyyyyy") // replaces "x"; weight 11 > 10: evicted at once
	c.Clear()
	if want := []string{"x", "yyyyyyyyyy"}; !slices.Equal(vals, want) {
		t.Errorf("MaxWeight 10, weight = len(value): Set(1, \"a\"), Set(1, \"b\"), Set(1, \"c\"), Set(2, \"x\"), Set(2, \"yyyyyyyyyy\"), Clear():\n"+
			"OnEvict calls %v;\nkey 2's values reported in the order %q, want %q (\"x\" left the cache first)", log, vals, want)
	}
}

// TestModelInPlaceReportOrder is TestModelReportOrder for a Set that
// replaces a word-sized value in place: when the Set's access finds the
// read buffer full, it runs maintenance before it reports the replaced
// value, and that maintenance may evict the entry, now holding the new
// value. OnEvict then hears (0, 1000, capacity) before (0, 0, replaced).
// The loop tries numbers of Gets until the Set's access is the one that
// finds its read-buffer stripe full (16 with the current buffer).
func TestModelInPlaceReportOrder(t *testing.T) {
	for gets := range 40 {
		var log []string
		var vals []int // key 0's values, in report order
		c := Must(Options[int, int]{
			MaxEntries: 32, // writers run maintenance every 2 writes
			OnEvict: func(k, v int, cause Cause) {
				if k == 0 {
					log = append(log, fmt.Sprintf("(%d, %d, %v)", k, v, cause))
					vals = append(vals, v)
				}
			},
		})
		c.Close()
		for k := 1; k <= 32; k++ {
			c.Set(k%32, k%32) // key 0 last: it is the window's candidate
		}
		c.settle()
		c.Set(100, 100) // over the bound until the next maintenance
		for range gets {
			c.Get(5)
		}
		c.Set(0, 1000) // in place
		c.Clear()
		if want := []int{0, 1000}; !slices.Equal(vals, want) {
			t.Fatalf("MaxEntries 32: Set(k, k) for k = 1..31 and 0, settle(), Set(100, 100), %d × Get(5), Set(0, 1000), Clear():\n"+
				"OnEvict calls for key 0: %v;\nkey 0's values reported in the order %v, want %v (0 left the cache first)", gets, log, vals, want)
		}
	}
}
