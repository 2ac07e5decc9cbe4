package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
)

// A sequential model of two instances sharing one Redis, with a source of
// truth that the test changes behind the caches' back.

type mOpKind uint8

const (
	mSet mOpKind = iota
	mDelete
	mSource
	mGet
	mGetMany
	mRelease // let the loaded values' writes held so far reach Redis
	mClock   // advance the fake clock (to an L1 lifetime's end, or by a second)
)

type mOp struct {
	kind mOpKind
	inst int      // 0 = A, 1 = B
	key  string   // all but mGetMany
	keys []string // mGetMany
	val  string   // mSet, mSource ("" = remove from the source: not found)
	edge int      // mClock: 0 to the end of inst's copy of key minus 1ns, 1 to its end, 2 a second on
}

func (o mOp) String() string {
	in := string(rune('A' + o.inst))
	switch o.kind {
	case mSet:
		return fmt.Sprintf("%s.Set(%s,%s)", in, o.key, o.val)
	case mDelete:
		return fmt.Sprintf("%s.Delete(%s)", in, o.key)
	case mSource:
		if o.val == "" {
			return fmt.Sprintf("source.remove(%s)", o.key)
		}
		return fmt.Sprintf("source[%s]=%s", o.key, o.val)
	case mGet:
		return fmt.Sprintf("%s.Get(%s)", in, o.key)
	case mClock:
		return fmt.Sprintf("clock: %s", []string{"to 1ns before the end of " + in + "'s " + o.key, "to the end of " + in + "'s " + o.key, "+1s"}[o.edge])
	case mRelease:
		return "release held writes of loaded values"
	default:
		return fmt.Sprintf("%s.GetMany(%v)", in, o.keys)
	}
}

const notFound = "<not found>"

func genOps(seed uint64, n int, keys []string, release, clock bool) []mOp {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ops := make([]mOp, 0, n)
	seq := 0
	for range n {
		seq++
		k := keys[r.IntN(len(keys))]
		inst := r.IntN(2)
		switch p := r.IntN(100); {
		case release && p >= 90:
			ops = append(ops, mOp{kind: mRelease})
		case clock && p >= 82:
			ops = append(ops, mOp{kind: mClock, inst: inst, key: k, edge: r.IntN(3)})
		case p < 15:
			ops = append(ops, mOp{kind: mSet, inst: inst, key: k, val: fmt.Sprint("set", seq)})
		case p < 27:
			ops = append(ops, mOp{kind: mDelete, inst: inst, key: k})
		case p < 42:
			v := fmt.Sprint("src", seq)
			if r.IntN(5) == 0 {
				v = ""
			}
			ops = append(ops, mOp{kind: mSource, key: k, val: v})
		case p < 88:
			ops = append(ops, mOp{kind: mGet, inst: inst, key: k})
		default:
			var ks []string
			for _, kk := range keys {
				if r.IntN(2) == 0 {
					ks = append(ks, kk)
				}
			}
			if len(ks) == 0 {
				ks = []string{k}
			}
			ops = append(ops, mOp{kind: mGetMany, inst: inst, keys: ks})
		}
	}
	return ops
}

// model is what the caches may answer.
type model struct {
	evicts, noNeg bool
	setVal        map[string]*string         // the last write was this Set
	loaded        map[string]map[string]bool // values returned since the last write (may be in Redis)
	src           map[string]string          // the source now ("" = not found)
	pin           [2]map[string]string       // what each instance's L1 holds (returned since the last write)
	pinAt         [2]map[string]time.Time    // when it was stored there
	localTTL      time.Duration              // with a fake clock: L1's lifetimes
}

// expire drops the pins whose L1 lifetime has ended at now.
func (m *model) expire(now time.Time) {
	if m.localTTL == 0 {
		return
	}
	for i := range m.pin {
		for k, at := range m.pinAt[i] {
			if !now.Before(at.Add(m.localTTL)) {
				delete(m.pin[i], k)
				delete(m.pinAt[i], k)
			}
		}
	}
}

func newModel() *model {
	return &model{
		setVal: map[string]*string{},
		loaded: map[string]map[string]bool{},
		src:    map[string]string{},
		pin:    [2]map[string]string{{}, {}},
		pinAt:  [2]map[string]time.Time{{}, {}},
	}
}

// allowed returns the answers the model allows for inst's Get of k.
// inRedis, if not nil, is the value Redis is known to hold for k (""
// for none: a tombstone or no key), with no write of a loaded value able
// to land before the Get's read (held writes).
func (m *model) allowed(inst int, k string, inRedis *string) []string {
	if v := m.setVal[k]; v != nil {
		return []string{*v}
	}
	if p, pinned := m.pin[inst][k]; pinned && !m.evicts {
		return []string{p}
	}
	if inRedis != nil {
		var out []string
		if p, ok := m.pin[inst][k]; ok {
			out = append(out, p)
		}
		want := *inRedis
		if want == "" {
			if want = m.src[k]; want == "" {
				want = notFound
			}
		}
		if !slices.Contains(out, want) {
			out = append(out, want)
		}
		return out
	}
	var out []string
	if p, ok := m.pin[inst][k]; ok {
		if !m.evicts {
			return []string{p}
		}
		out = append(out, p)
	}
	for v := range m.loaded[k] {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	s := m.src[k]
	if s == "" {
		s = notFound
	}
	if !slices.Contains(out, s) {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func (m *model) observe(inst int, k, got string, now time.Time) {
	if m.setVal[k] != nil {
		return
	}
	if got != notFound || !m.noNeg {
		if _, pinned := m.pin[inst][k]; !pinned {
			m.pinAt[inst][k] = now
		}
		m.pin[inst][k] = got
	} else {
		delete(m.pin[inst], k)
		delete(m.pinAt[inst], k)
	}
	if got != notFound {
		if m.loaded[k] == nil {
			m.loaded[k] = map[string]bool{}
		}
		m.loaded[k][got] = true
	}
}

func (m *model) write(k string, v *string) {
	m.setVal[k] = v
	delete(m.loaded, k)
	for i := range m.pin {
		delete(m.pin[i], k)
		delete(m.pinAt[i], k)
	}
}

type mRunConfig struct {
	client goredis.UniversalClient
	tweak  func(*Options[string])
	gate   *writeGate // nil: loaded values' writes go at once
	// evicts: L1 may lose a key (a small MaxEntries), so a value it
	// returned does not pin the next answer; noNeg: not-found answers
	// are not remembered.
	evicts, noNeg bool
	// clock: a fake clock (Options.Clock) and L1 lifetimes of clockTTL.
	clock bool
}

const clockTTL = 10 * time.Second

// writeGate is a go-redis hook that holds the compare-and-set writes of
// loaded values (EVALSHA; the EVAL after a NOSCRIPT goes at once) while
// on, until released.
type writeGate struct {
	mu    sync.Mutex
	on    bool
	held  []chan struct{}
	total int
}

func (g *writeGate) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (g *writeGate) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (g *writeGate) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmdName(cmd) == "evalsha" {
			g.mu.Lock()
			if g.on {
				ch := make(chan struct{})
				g.held = append(g.held, ch)
				g.mu.Unlock()
				select {
				case <-ch:
				case <-ctx.Done():
				}
			} else {
				g.mu.Unlock()
			}
		}
		return next(ctx, cmd)
	}
}

func (g *writeGate) set(on bool) {
	g.mu.Lock()
	g.on = on
	g.mu.Unlock()
}

// release lets the held writes go and returns how many there were.
func (g *writeGate) release() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ch := range g.held {
		close(ch)
	}
	n := len(g.held)
	g.total += n
	g.held = nil
	return n
}

func writeOutcomes(cs [2]*Cache[string]) uint64 {
	var n uint64
	for _, c := range cs {
		st := c.Stats()
		n += st.L2Writes + st.L2WritesRejected + st.L2WriteErrors + st.L2WritesDropped
	}
	return n
}

var modelPrefixSeq atomic.Int64

// runModel runs ops against two fresh instances and returns the index of
// the first op whose answer the model does not allow, and a description
// (-1, "" if none).
func runModel(t *testing.T, cfg mRunConfig, ops []mOp) (int, string) {
	t.Helper()
	ctx := context.Background()
	src := newSource()
	prefix := fmt.Sprintf("%sm%d:", testPrefix(t), modelPrefixSeq.Add(1))
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	mk := func() *Cache[string] {
		o := Options[string]{
			Client:  cfg.client,
			Loader:  src,
			Prefix:  prefix,
			Timeout: time.Second,
			TTL:     time.Hour,
		}
		o.Local.TTL = 30 * time.Minute
		o.Local.MaxEntries = 10_000
		if cfg.tweak != nil {
			cfg.tweak(&o)
		}
		if cfg.clock {
			o.Clock = clock
			o.Local.TTL = clockTTL
		}
		c, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cs := [2]*Cache[string]{mk(), mk()}
	defer cs[0].Close()
	defer cs[1].Close()
	if g := cfg.gate; g != nil {
		g.set(true)
		defer func() {
			g.set(false)
			g.release()
		}()
	}
	for _, c := range cs {
		eventually(t, 10*time.Second, "subscription confirmed", func() bool { return c.Stats().Subscribed })
	}
	m := newModel()
	m.evicts, m.noNeg = cfg.evicts, cfg.noNeg
	if cfg.clock {
		m.localTTL = clockTTL
	}
	var received [2]uint64
	peek := func(k string) *string {
		if cfg.gate == nil {
			return nil
		}
		raw, ok := rawGet(t, cfg.client, prefix+k)
		v := ""
		if ok && len(raw) >= headerSize && raw[3] == kindValue {
			v = raw[headerSize:]
		}
		return &v
	}
	check := func(i int, op mOp, inst int, k, got string, inRedis *string) (int, string) {
		allowed := m.allowed(inst, k, inRedis)
		if !slices.Contains(allowed, got) {
			return i, fmt.Sprintf("%v: %s answered %q for %s, model allows %q", op, string(rune('A'+inst)), got, k, allowed)
		}
		m.observe(inst, k, got, clock.Now())
		return -1, ""
	}
	for i, op := range ops {
		m.expire(clock.Now())
		switch op.kind {
		case mClock:
			at, ok := m.pinAt[op.inst][op.key]
			switch end := at.Add(clockTTL); {
			case !ok || op.edge == 2:
				clock.add(time.Second)
			case op.edge == 0:
				clock.mu.Lock()
				clock.t = end.Add(-time.Nanosecond)
				clock.mu.Unlock()
			default:
				clock.mu.Lock()
				clock.t = end
				clock.mu.Unlock()
			}
		case mSet, mDelete:
			var err error
			if op.kind == mSet {
				err = cs[op.inst].Set(ctx, op.key, op.val)
				v := op.val
				m.write(op.key, &v)
			} else {
				err = cs[op.inst].Delete(ctx, op.key)
				m.write(op.key, nil)
			}
			if err != nil {
				return i, fmt.Sprintf("%v: %v", op, err)
			}
			other := 1 - op.inst
			received[other]++
			want := received[other]
			eventually(t, 10*time.Second, "invalidation received", func() bool {
				return cs[other].Stats().InvalidationsReceived >= want
			})
		case mRelease:
			if cfg.gate == nil {
				continue
			}
			before := writeOutcomes(cs)
			n := cfg.gate.release()
			eventually(t, 10*time.Second, "released writes done", func() bool {
				return writeOutcomes(cs) >= before+uint64(n)
			})
		case mSource:
			src.mu.Lock()
			if op.val == "" {
				delete(src.values, op.key)
			} else {
				src.values[op.key] = op.val
			}
			src.mu.Unlock()
			m.src[op.key] = op.val
		case mGet:
			inRedis := peek(op.key)
			v, err := cs[op.inst].Get(ctx, op.key)
			got := v
			switch {
			case errors.Is(err, loading.ErrNotFound):
				got = notFound
			case err != nil:
				return i, fmt.Sprintf("%v: %v", op, err)
			}
			if j, d := check(i, op, op.inst, op.key, got, inRedis); j >= 0 {
				return j, d
			}
		case mGetMany:
			inRedis := map[string]*string{}
			for _, k := range op.keys {
				inRedis[k] = peek(k)
			}
			res, err := cs[op.inst].GetMany(ctx, op.keys)
			var be *loading.BulkError[string]
			if err != nil && !errors.As(err, &be) {
				return i, fmt.Sprintf("%v: %v", op, err)
			}
			for _, k := range op.keys {
				got, ok := res[k]
				if !ok {
					var kerr error
					if be != nil {
						kerr = be.Errors[k]
					}
					if !errors.Is(kerr, loading.ErrNotFound) {
						return i, fmt.Sprintf("%v: key %s missing with error %v", op, k, kerr)
					}
					got = notFound
				} else if be != nil && be.Errors[k] != nil {
					return i, fmt.Sprintf("%v: key %s = %q with error %v", op, k, got, be.Errors[k])
				}
				if j, d := check(i, op, op.inst, k, got, inRedis[k]); j >= 0 {
					return j, d
				}
			}
		}
	}
	return -1, ""
}

// shrink removes ops one at a time while the run still diverges.
func shrink(t *testing.T, cfg mRunConfig, ops []mOp, at int) ([]mOp, string) {
	ops = slices.Clone(ops[:at+1])
	_, desc := runModel(t, cfg, ops)
	for budget := 300; budget > 0; {
		progress := false
		for i := len(ops) - 2; i >= 0 && budget > 0; i-- {
			try := slices.Delete(slices.Clone(ops), i, i+1)
			budget--
			if j, d := runModel(t, cfg, try); j >= 0 {
				ops, desc = try[:j+1], d
				progress = true
				if i > len(ops)-1 {
					i = len(ops) - 1
				}
			}
		}
		if !progress {
			break
		}
	}
	return ops, desc
}

func fmtOps(ops []mOp) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "\n  %2d %v", i, o)
	}
	return b.String()
}

// TestModelSequentialConsistency drives two instances sharing one Redis
// (standalone and cluster) with random sequences of writes, reads, source
// changes and, where the variant holds them, releases of the loaded values'
// Redis writes, and checks every answer against the model: a Set's value
// everywhere once its invalidation arrived, no value older than the last
// write, none that was never written or loaded, GetMany as Get. A
// divergence names its seed and a shrunk sequence. MODEL_SEEDS=N runs N
// seeds per variant (default 4).
func TestModelSequentialConsistency(t *testing.T) {
	slow := func(o *Options[string]) {
		o.Timeout = 20 * time.Second
		o.TombstoneTTL = 2 * time.Minute
	}
	variants := []struct {
		name          string
		tweak         func(*Options[string])
		gated         bool
		evicts, noNeg bool
	}{
		{"default", nil, false, false, false},
		{"exactTTL", func(o *Options[string]) { o.ExactTTL = true }, false, false, false},
		{"noCoalesce", func(o *Options[string]) { o.ReadsInFlight = -1 }, false, false, false},
		{"heldWrites", slow, true, false, false},
		{"heldWrites1Writer", func(o *Options[string]) { slow(o); o.Writers = 1 }, true, false, false},
		{"json", func(o *Options[string]) { o.Codec = JSONCodec[string]{} }, false, false, false},
		{"jitter", func(o *Options[string]) { o.Local.TTLJitter = 0.5 }, false, false, false},
		{"tinyL1", func(o *Options[string]) { o.Local.MaxEntries = 1 }, false, true, false},
		{"tinyL1HeldWrites", func(o *Options[string]) { slow(o); o.Local.MaxEntries = 1 }, true, true, false},
		{"noNegativeCache", func(o *Options[string]) { o.Local.NotFoundTTL = -1 }, false, false, true},
		{"clock", nil, false, false, false},
		{"oddKeys", slow, true, false, false},
		{"manyKeysCoalesced", func(o *Options[string]) { slow(o); o.ReadsInFlight = 1 }, true, false, false},
		{"manyKeysCoalescedExact", func(o *Options[string]) { slow(o); o.ReadsInFlight = 1; o.ExactTTL = true }, true, false, false},
		{"clockHeldWrites", slow, true, false, false},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		for _, v := range variants {
			t.Run(v.name, func(t *testing.T) {
				cl, _ := b.client(t)
				cfg := mRunConfig{client: cl, tweak: v.tweak, evicts: v.evicts, noNeg: v.noNeg, clock: strings.HasPrefix(v.name, "clock")}
				if v.gated {
					cfg.gate = &writeGate{}
					cl.AddHook(cfg.gate)
				}
				defer func() {
					if cfg.gate != nil {
						t.Logf("writes held and released: %d", cfg.gate.total)
					}
				}()
				nseeds := uint64(4)
				if e := os.Getenv("MODEL_SEEDS"); e != "" {
					fmt.Sscan(e, &nseeds)
				}
				for seed := uint64(1); seed <= nseeds; seed++ {
					t.Logf("seed %d", seed)
					keys := []string{"k1", "k2"}
					if strings.HasPrefix(v.name, "manyKeys") {
						keys = []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}
					}
					if v.name == "oddKeys" {
						keys = []string{"", "a b\n", "ключ", strings.Repeat("x", 3000), "{tag}k"}
					}
					ops := genOps(seed, 120, keys, v.gated, cfg.clock)
					if at, desc := runModel(t, cfg, ops); at >= 0 {
						min, d := shrink(t, cfg, ops, at)
						t.Errorf("seed %d: first divergence at op %d: %s\nminimal sequence:%s\n(%s)", seed, at, desc, fmtOps(min), d)
					}
				}
			})
		}
	})
}

// l1Answer tells whether c.Get(key) was answered by L1, and what it got.
func l1Answer(t *testing.T, c *Cache[string], key string) (string, bool) {
	t.Helper()
	hits := func() uint64 { st := c.Stats(); return st.L1Hits + st.Local.ErrorHits }
	before := hits()
	v, err := c.Get(context.Background(), key)
	if errors.Is(err, loading.ErrNotFound) {
		v = notFound
	} else if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return v, hits() > before
}

// checkBoundary checks that key is an L1 hit on c until exactly life after
// start (on clock), and a miss at start+life.
func checkBoundary(t *testing.T, what string, c *Cache[string], clock *fakeClock, start time.Time, key string, life time.Duration, exact bool) {
	t.Helper()
	if exact {
		clock.mu.Lock()
		clock.t = start.Add(life - time.Nanosecond)
		clock.mu.Unlock()
		if _, hit := l1Answer(t, c, key); !hit {
			t.Errorf("%s: not an L1 hit %v after it was stored, want one until %v", what, life-time.Nanosecond, life)
		}
	}
	clock.mu.Lock()
	clock.t = start.Add(life)
	clock.mu.Unlock()
	if _, hit := l1Answer(t, c, key); hit {
		t.Errorf("%s: still an L1 hit %v after it was stored, want a miss", what, life)
	}
}

func TestModelL1ExpiryBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name          string
		ttl, localTTL time.Duration
		want          time.Duration
	}{
		{"explicit", time.Hour, 7 * time.Second, 7 * time.Second},
		{"defaultLocal", time.Hour, 0, DefaultLocalTTL},
		{"localFromShortTTL", 10 * time.Second, 0, 10 * time.Second},
		{"localEqualsTTL", 20 * time.Second, 20 * time.Second, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t)
			cl := standaloneClient(t)
			clock := &fakeClock{t: time.Unix(1e9, 0)}
			src := newSource()
			tweak := func(o *Options[string]) {
				o.Clock = clock
				o.TTL = tc.ttl
				o.Local.TTL = tc.localTTL
			}
			a := newTier(t, cl, src, tweak)
			b := newTier(t, cl, src, tweak)
			waitSubscribed(t, a, b)
			ctx := context.Background()

			// A Set's value in the writer's L1.
			start := clock.Now()
			if err := a.Set(ctx, "set", "v"); err != nil {
				t.Fatal(err)
			}
			// The other instance reads it from Redis.
			eventually(t, 10*time.Second, "invalidation", func() bool { return b.Stats().InvalidationsReceived >= 1 })
			if v, hit := l1Answer(t, b, "set"); hit || v != "v" {
				t.Fatalf("B.Get(set) = %q (L1 hit %v), want v from Redis", v, hit)
			}
			checkBoundary(t, "Set's value in the writer", a, clock, start, "set", tc.want, true)
			// The Redis entry's remaining TTL (real time) bounds the
			// reader's copy too: exact only when it is well beyond.
			checkBoundary(t, "Redis hit in the reader", b, clock, start, "set", tc.want, tc.ttl > tc.want+time.Minute)

			// A value loaded from the source.
			src.set("loaded", "s")
			start = clock.Now()
			if v, hit := l1Answer(t, a, "loaded"); hit || v != "s" {
				t.Fatalf("A.Get(loaded) = %q (L1 hit %v), want s from the source", v, hit)
			}
			checkBoundary(t, "loaded value", a, clock, start, "loaded", tc.want, true)

			// A not-found answer: NotFoundTTL defaults to L1's TTL.
			start = clock.Now()
			if v, hit := l1Answer(t, a, "missing"); hit || v != notFound {
				t.Fatalf("A.Get(missing) = %q (L1 hit %v), want not found", v, hit)
			}
			checkBoundary(t, "not-found answer", a, clock, start, "missing", tc.want, true)
		})
	}
}

// With a TTLJitter and the default Local.TTL, no L1 copy outlives TTL.
func TestModelL1JitterWithinTTL(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	src := newSource()
	const ttl = 10 * time.Second
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Clock = clock
		o.TTL = ttl
		o.Local.TTLJitter = 0.9
	})
	ctx := context.Background()
	start := clock.Now()
	const n = 200
	for i := range n {
		k := fmt.Sprint("k", i)
		if i%2 == 0 {
			if err := c.Set(ctx, k, "v"); err != nil {
				t.Fatal(err)
			}
		} else {
			src.set(k, "s")
			mustGet(t, c, k, "s")
		}
	}
	clock.add(ttl)
	_ = start
	for i := range n {
		k := fmt.Sprint("k", i)
		if _, hit := l1Answer(t, c, k); hit {
			t.Errorf("%s: an L1 hit %v after it was stored, past TTL", k, ttl)
		}
	}
}

// A Redis entry shorter-lived than Local.TTL bounds the L1 copy of the
// instance that reads it.
func TestModelL1BoundedByRedisEntry(t *testing.T) {
	checkLeaks(t)
	cl := standaloneClient(t)
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	src := newSource()
	for _, exact := range []bool{false, true} {
		short := newTier(t, cl, src, func(o *Options[string]) { o.Clock = clock; o.TTL = 3 * time.Second })
		long := newTier(t, cl, src, func(o *Options[string]) {
			o.Clock = clock
			o.TTL = time.Hour
			o.Local.TTL = 30 * time.Minute
			o.ExactTTL = exact
		})
		waitSubscribed(t, short, long)
		k := fmt.Sprint("k", exact)
		if err := short.Set(context.Background(), k, "v"); err != nil {
			t.Fatal(err)
		}
		start := clock.Now()
		mustGet(t, long, k, "v")
		clock.mu.Lock()
		clock.t = start.Add(3 * time.Second)
		clock.mu.Unlock()
		if _, hit := l1Answer(t, long, k); hit {
			t.Errorf("ExactTTL %v: an L1 hit 3s after reading an entry written with TTL 3s", exact)
		}
	}
}

// Values loaded while the subscription is down live DegradedTTL in L1.
func TestModelL1DegradedBoundary(t *testing.T) {
	checkLeaks(t)
	cl := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = cl.Close() })
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	src := newSource()
	src.set("k", "s")
	c := newTier(t, cl, src, func(o *Options[string]) {
		o.Clock = clock
		o.DegradedTTL = 2 * time.Second
		o.Logger = slog.New(slog.DiscardHandler)
	})
	start := clock.Now()
	if v, hit := l1Answer(t, c, "k"); hit || v != "s" {
		t.Fatalf("Get = %q (hit %v)", v, hit)
	}
	checkBoundary(t, "value loaded while down", c, clock, start, "k", 2*time.Second, true)
}
