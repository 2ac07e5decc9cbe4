package cachekit

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Linearizability tests: goroutines run random Get/Set/Delete operations on
// a small key space, the history (call and return of every operation,
// timestamped by a shared atomic counter) is checked with porcupine against
// a sequential model, one key at a time (the model partitions by key).
// Every Set writes a value unique within the history, so a Get that returns
// a value names the very Set it observed.
//
// The base seed is random and logged; set CACHEKIT_LINEARIZABILITY_SEED to
// replay a run's operation sequences (the interleaving is up to the
// scheduler, so a replay is not guaranteed to reproduce a failure).

const linSeedEnv = "CACHEKIT_LINEARIZABILITY_SEED"

type linOp uint8

const (
	linSet linOp = iota
	linGet
	linDelete
)

// linInput is an operation's input. Values are positive: 0 is the model's
// "no value".
type linInput struct {
	op    linOp
	key   int
	value int // Set only
}

// linOutput is an operation's output: Get's result, or Set's report.
type linOutput struct {
	value int
	ok    bool
}

// linModel returns the per-key model of the cache.
//
// The state of a key is an int: 0 for no value, v > 0 for value v.
//
// strict (unbounded cache, nothing is ever evicted): the state is the
// key's current value and the model is a plain register with delete: Set(v)
// makes it v, Delete makes it 0, Get must return (v, true) if it is v and
// a miss if it is 0.
//
// relaxed (bounded cache, an entry may be evicted at any moment, even
// before the Set that stored it returns): eviction is an invisible Delete
// that may happen at any point. The state is then the only value that Get
// may still return (v), or nothing (0): Set(v) makes it v, Delete makes it
// 0, a Get may return (v, true) only if the state is v, and a Get may miss
// at any time, but a miss proves that the value has left the cache (evicted
// or deleted at or before the miss's linearization point), and the cache
// never brings an evicted value back, so a miss makes the state 0: a later
// Get may not return the old value again unless it is set again.
func linModel(strict bool) porcupine.Model {
	return porcupine.Model{
		Partition:      linPartition,
		PartitionEvent: linPartitionEvent,
		Init:           func() any { return 0 },
		Step: func(state, input, output any) (bool, any) {
			s := state.(int)
			in := input.(linInput)
			out := output.(linOutput)
			switch in.op {
			case linSet:
				if !out.ok {
					return true, s // refused: the cache is unchanged
				}
				return true, in.value
			case linDelete:
				return true, 0
			case linGet:
				if out.ok {
					return s != 0 && out.value == s, s
				}
				if strict {
					return s == 0, s
				}
				return true, 0
			}
			panic(fmt.Sprintf("unknown operation %d", in.op))
		},
		DescribeOperation: func(input, output any) string {
			return linDescribe(input.(linInput), output.(linOutput))
		},
		DescribeState: func(state any) string {
			if s := state.(int); s != 0 {
				return strconv.Itoa(s)
			}
			return "∅"
		},
	}
}

func linDescribe(in linInput, out linOutput) string {
	switch in.op {
	case linSet:
		if !out.ok {
			return fmt.Sprintf("Set(%d, %d) refused", in.key, in.value)
		}
		return fmt.Sprintf("Set(%d, %d)", in.key, in.value)
	case linDelete:
		return fmt.Sprintf("Delete(%d)", in.key)
	default:
		if out.ok {
			return fmt.Sprintf("Get(%d) -> %d", in.key, out.value)
		}
		return fmt.Sprintf("Get(%d) -> miss", in.key)
	}
}

// linPartition splits a history by key, keys in increasing order.
func linPartition(history []porcupine.Operation) [][]porcupine.Operation {
	byKey := map[int][]porcupine.Operation{}
	for _, op := range history {
		k := op.Input.(linInput).key
		byKey[k] = append(byKey[k], op)
	}
	keys := slices.Sorted(maps.Keys(byKey))
	parts := make([][]porcupine.Operation, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, byKey[k])
	}
	return parts
}

// linPartitionEvent splits an event history by key; a return event belongs
// to the key of the call event with the same Id.
func linPartitionEvent(history []porcupine.Event) [][]porcupine.Event {
	keyOf := map[int]int{}
	byKey := map[int][]porcupine.Event{}
	var keys []int
	for _, ev := range history {
		if ev.Kind == porcupine.CallEvent {
			keyOf[ev.Id] = ev.Value.(linInput).key
		}
		k, ok := keyOf[ev.Id]
		if !ok {
			panic(fmt.Sprintf("return event %d before its call", ev.Id))
		}
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], ev)
	}
	slices.Sort(keys)
	parts := make([][]porcupine.Event, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, byKey[k])
	}
	return parts
}

// linBaseSeed returns the base seed, from the environment if set.
func linBaseSeed(t *testing.T) uint64 {
	t.Helper()
	seed := rand.Uint64()
	if s := os.Getenv(linSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", linSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("base seed %d (set %s=%d to replay the operation sequences)", seed, linSeedEnv, seed)
	return seed
}

// linCache is a Cache[int, V] seen as a cache of ints, so that one harness
// drives every way the cache stores values (value.go).
type linCache struct {
	set     func(k, v int) bool
	get     func(k int) (int, bool)
	del     func(k int)
	evicted func() uint64
	close   func()
}

// linValues names a value type and makes a linCache of it.
type linValues struct {
	name string
	make func(maxEntries int, collide bool) linCache
}

var linValueTypes = []linValues{
	// int: a pointer-free word, replaced in place by Set.
	{"word", func(n int, collide bool) linCache {
		return linAdapt(n, collide, func(v int) int { return v }, func(v int) int { return v })
	}},
	// *int: a pointer word, replaced in place by Set.
	{"pointer", func(n int, collide bool) linCache {
		return linAdapt(n, collide, func(v int) *int { return &v }, func(p *int) int { return *p })
	}},
	// [2]int: larger than a word, immutable; Set publishes a new entry.
	{"inline", func(n int, collide bool) linCache {
		return linAdapt(n, collide, func(v int) [2]int { return [2]int{v, -v} }, func(a [2]int) int {
			if a[1] != -a[0] {
				panic(fmt.Sprintf("torn value %v", a))
			}
			return a[0]
		})
	}},
}

// linAdapt makes a Cache[int, V] bounded by maxEntries (0: unbounded),
// optionally with forced hash collisions, that stores wrap(v) for v.
func linAdapt[V any](maxEntries int, collide bool, wrap func(int) V, unwrap func(V) int) linCache {
	c := Must(Options[int, V]{MaxEntries: maxEntries})
	if collide {
		// Before the cache is shared. Top bits zero: one segment; low bits
		// in 0..2: every key probes from one of three slots.
		c.setHasher(func(k int) uint64 { return uint64(k % 3) })
	}
	return linCache{
		set: func(k, v int) bool { return c.Set(k, wrap(v)) },
		get: func(k int) (int, bool) {
			v, ok := c.Get(k)
			if !ok {
				return 0, false
			}
			return unwrap(v), true
		},
		del:     c.Delete,
		evicted: func() uint64 { return c.Stats().Evicted },
		close:   c.Close,
	}
}

type linConfig struct {
	values     linValues
	maxEntries int  // 0: unbounded
	collide    bool // force hash collisions: every key in one segment, long probe chains
	strict     bool // model: strict register (unbounded) or relaxed (bounded)
	keys       int
	clients    int
	ops        int // per client and round
	rounds     int
	// percentages of Set and Delete; the rest are Gets
	setPct, delPct int
}

type linCounts struct {
	hits, misses, sets, deletes, evicted uint64
	overlapping                          uint64 // ops concurrent with another op on the same key
}

// linRun runs cfg.rounds rounds, each on a fresh cache, and checks every
// round's history.
func linRun(t *testing.T, cfg linConfig) {
	seed := linBaseSeed(t)
	model := linModel(cfg.strict)
	var total linCounts
	begin := time.Now()
	for round := range cfg.rounds {
		history, counts := linRound(cfg, seed, round)
		total.hits += counts.hits
		total.misses += counts.misses
		total.sets += counts.sets
		total.deletes += counts.deletes
		total.evicted += counts.evicted
		total.overlapping += linOverlapping(history)
		res, info := porcupine.CheckOperationsVerbose(model, history, 10*time.Second)
		if res != porcupine.Ok {
			where := linVisualize(t, model, info)
			t.Fatalf("round %d (base seed %d): porcupine says %s; visualization: %s\n%s",
				round, seed, res, where, linExplain(model, history))
		}
	}
	t.Logf("%d rounds of %d ops in %v: %d sets, %d deletes, %d get hits, %d get misses, %d evicted; %d ops overlap another on their key",
		cfg.rounds, cfg.clients*cfg.ops, time.Since(begin).Round(time.Millisecond),
		total.sets, total.deletes, total.hits, total.misses, total.evicted, total.overlapping)
	// Guard against a vacuous test: the histories must contain hits (the
	// checker then verifies values) and misses. Overlap needs more than one
	// core (or a preemption inside an operation), so its absence is only
	// reported.
	if total.hits == 0 || total.misses == 0 {
		t.Errorf("degenerate histories: %d hits, %d misses", total.hits, total.misses)
	}
	if total.overlapping == 0 {
		t.Logf("no two operations on a key overlapped (GOMAXPROCS=%d): the histories were sequential", runtime.GOMAXPROCS(0))
	}
}

// linRound runs one round and returns its history.
func linRound(cfg linConfig, seed uint64, round int) ([]porcupine.Operation, linCounts) {
	c := cfg.values.make(cfg.maxEntries, cfg.collide)
	defer c.close()
	var (
		clock   atomic.Int64 // logical time: every call and return is a distinct tick
		wg      sync.WaitGroup
		start   = make(chan struct{})
		ready   atomic.Int32
		history = make([][]porcupine.Operation, cfg.clients)
		counts  = make([]linCounts, cfg.clients)
	)
	for g := range cfg.clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(round)<<16|uint64(g)))
			ops := make([]porcupine.Operation, 0, cfg.ops)
			n := &counts[g]
			<-start
			// Wait until every client runs, so that the scripts overlap
			// rather than run one after the other.
			ready.Add(1)
			for ready.Load() < int32(cfg.clients) {
				runtime.Gosched()
			}
			for i := range cfg.ops {
				in := linInput{key: rng.IntN(cfg.keys)}
				switch r := rng.IntN(100); {
				case r < cfg.setPct:
					in.op = linSet
					in.value = g*cfg.ops + i + 1 // unique in the round, > 0
				case r < cfg.setPct+cfg.delPct:
					in.op = linDelete
				default:
					in.op = linGet
				}
				yield := rng.IntN(4) == 0
				var out linOutput
				call := clock.Add(1)
				switch in.op {
				case linSet:
					out.ok = c.set(in.key, in.value)
					n.sets++
				case linDelete:
					c.del(in.key)
					n.deletes++
				case linGet:
					out.value, out.ok = c.get(in.key)
					if out.ok {
						n.hits++
					} else {
						n.misses++
					}
				}
				ret := clock.Add(1)
				ops = append(ops, porcupine.Operation{
					ClientId: g, Input: in, Call: call, Output: out, Return: ret,
				})
				if yield {
					// Let the other clients run: with few cores, a client
					// would otherwise run its whole script in one slice.
					runtime.Gosched()
				}
			}
			history[g] = ops
		})
	}
	close(start)
	wg.Wait()
	var total linCounts
	for _, n := range counts {
		total.hits += n.hits
		total.misses += n.misses
		total.sets += n.sets
		total.deletes += n.deletes
	}
	total.evicted = c.evicted()
	return slices.Concat(history...), total
}

// linOverlapping counts the operations whose interval overlaps that of
// another operation on the same key.
func linOverlapping(history []porcupine.Operation) uint64 {
	var n uint64
	for _, part := range linPartition(history) {
		part = slices.Clone(part)
		slices.SortFunc(part, func(x, y porcupine.Operation) int { return cmp.Compare(x.Call, y.Call) })
		// Sweep in call order: op i overlaps an earlier op if one of them
		// returned after i's call, and a later op if the next call comes
		// before i's return.
		var maxRet int64 = -1
		for i, op := range part {
			if maxRet > op.Call || (i+1 < len(part) && part[i+1].Call < op.Return) {
				n++
			}
			maxRet = max(maxRet, op.Return)
		}
	}
	return n
}

// linVisualize writes porcupine's visualization of a failed check to a file
// that outlives the test, and returns its path (or why there is none).
func linVisualize(t *testing.T, model porcupine.Model, info porcupine.LinearizationInfo) string {
	t.Helper()
	f, err := os.CreateTemp("", "cachekit-linearizability-*.html")
	if err != nil {
		return fmt.Sprintf("(none: %v)", err)
	}
	err = porcupine.Visualize(model, info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Sprintf("(none: %v)", err)
	}
	return f.Name()
}

// linExplain lists, for every key whose history alone is not linearizable,
// that key's operations in call order.
func linExplain(model porcupine.Model, history []porcupine.Operation) string {
	var b strings.Builder
	for _, part := range linPartition(history) {
		if res, _ := porcupine.CheckOperationsVerbose(model, part, 10*time.Second); res == porcupine.Ok {
			continue
		}
		part = slices.Clone(part)
		slices.SortFunc(part, func(x, y porcupine.Operation) int { return cmp.Compare(x.Call, y.Call) })
		fmt.Fprintf(&b, "key %d: %d operations (client [call, return] operation):\n",
			part[0].Input.(linInput).key, len(part))
		for _, op := range part {
			fmt.Fprintf(&b, "  c%d [%d, %d] %s\n", op.ClientId, op.Call, op.Return,
				linDescribe(op.Input.(linInput), op.Output.(linOutput)))
		}
	}
	return b.String()
}

// The concurrent tests do not call t.Parallel: they need the machine's
// cores to themselves, or the clients' operations hardly ever overlap.

func TestLinearizabilityUnbounded(t *testing.T) {
	for _, values := range linValueTypes {
		for _, collide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/collide=%v", values.name, collide), func(t *testing.T) {
				linRun(t, linConfig{
					values:  values,
					collide: collide,
					strict:  true,
					keys:    6,
					clients: 6,
					ops:     50,
					rounds:  80,
					setPct:  40,
					delPct:  15,
				})
			})
		}
	}
}

func TestLinearizabilityBounded(t *testing.T) {
	for _, values := range linValueTypes {
		for _, collide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/collide=%v", values.name, collide), func(t *testing.T) {
				linRun(t, linConfig{
					values:     values,
					maxEntries: 4,
					collide:    collide,
					strict:     false,
					keys:       16,
					clients:    6,
					ops:        50,
					rounds:     80,
					setPct:     45,
					delPct:     10,
				})
			})
		}
	}
}

// TestLinearizabilityModel is the negative control: the models must reject
// hand-made illegal histories (and accept legal ones), so an Ok from the
// concurrent tests means something.
func TestLinearizabilityModel(t *testing.T) {
	t.Parallel()
	type opSpec struct {
		input  linInput
		output linOutput
	}
	set := func(k, v int) opSpec { return opSpec{linInput{op: linSet, key: k, value: v}, linOutput{ok: true}} }
	del := func(k int) opSpec { return opSpec{linInput{op: linDelete, key: k}, linOutput{}} }
	hit := func(k, v int) opSpec { return opSpec{linInput{op: linGet, key: k}, linOutput{value: v, ok: true}} }
	miss := func(k int) opSpec { return opSpec{linInput{op: linGet, key: k}, linOutput{}} }
	type step struct {
		client    int
		call, ret int64
		opSpec
	}
	at := func(client int, start, end int64, c opSpec) step { return step{client, start, end, c} }
	cases := []struct {
		name            string
		steps           []step
		strict, relaxed porcupine.CheckResult
	}{
		{
			// The Get starts after Set(2) returned: 1 was overwritten.
			name:   "get returns overwritten value",
			steps:  []step{at(0, 1, 2, set(0, 1)), at(0, 3, 4, set(0, 2)), at(1, 5, 6, hit(0, 1))},
			strict: porcupine.Illegal, relaxed: porcupine.Illegal,
		},
		{
			name:   "get returns deleted value",
			steps:  []step{at(0, 1, 2, set(0, 1)), at(0, 3, 4, del(0)), at(1, 5, 6, hit(0, 1))},
			strict: porcupine.Illegal, relaxed: porcupine.Illegal,
		},
		{
			name:   "get returns a value never written for its key",
			steps:  []step{at(0, 1, 2, set(0, 1)), at(1, 3, 4, hit(1, 1))},
			strict: porcupine.Illegal, relaxed: porcupine.Illegal,
		},
		{
			name:   "get returns a value before it is written",
			steps:  []step{at(1, 1, 2, hit(0, 1)), at(0, 3, 4, set(0, 1))},
			strict: porcupine.Illegal, relaxed: porcupine.Illegal,
		},
		{
			// An evicted (missed) value must not come back.
			name:   "evicted value resurrected",
			steps:  []step{at(0, 1, 2, set(0, 1)), at(1, 3, 4, miss(0)), at(1, 5, 6, hit(0, 1))},
			strict: porcupine.Illegal, relaxed: porcupine.Illegal,
		},
		{
			// Two readers see the writes in opposite orders.
			name: "readers disagree on the order of writes",
			steps: []step{
				at(0, 1, 10, set(0, 1)), at(1, 2, 11, set(0, 2)),
				at(2, 3, 4, hit(0, 1)), at(2, 5, 6, hit(0, 2)),
				at(3, 3, 4, hit(0, 2)), at(3, 5, 6, hit(0, 1)),
			},
			strict: porcupine.Illegal, relaxed: porcupine.Illegal,
		},
		{
			// Legal for a cache that may evict, not for one that may not.
			name:   "miss after set",
			steps:  []step{at(0, 1, 2, set(0, 1)), at(1, 3, 4, miss(0))},
			strict: porcupine.Illegal, relaxed: porcupine.Ok,
		},
		{
			name: "concurrent overwrite observed either way",
			steps: []step{
				at(0, 1, 2, set(0, 1)), at(0, 3, 10, set(0, 2)),
				at(1, 4, 5, hit(0, 1)), at(1, 6, 7, hit(0, 2)), at(2, 8, 9, hit(0, 2)),
				at(3, 4, 5, set(1, 3)), at(3, 6, 7, del(1)), at(2, 10, 11, miss(1)),
			},
			strict: porcupine.Ok, relaxed: porcupine.Ok,
		},
		{
			// A miss concurrent with a Delete and a re-Set, then the new value.
			name: "miss between delete and set",
			steps: []step{
				at(0, 1, 2, set(0, 1)), at(0, 3, 4, del(0)), at(0, 5, 8, set(0, 2)),
				at(1, 3, 6, miss(0)), at(1, 9, 10, hit(0, 2)),
			},
			strict: porcupine.Ok, relaxed: porcupine.Ok,
		},
	}
	for _, tc := range cases {
		ops := make([]porcupine.Operation, len(tc.steps))
		var events []porcupine.Event
		for i, s := range tc.steps {
			ops[i] = porcupine.Operation{ClientId: s.client, Input: s.input, Call: s.call, Output: s.output, Return: s.ret}
		}
		// The same history as events, to exercise PartitionEvent.
		type stamped struct {
			at int64
			ev porcupine.Event
		}
		var evs []stamped
		for i, s := range tc.steps {
			evs = append(evs,
				stamped{s.call, porcupine.Event{ClientId: s.client, Kind: porcupine.CallEvent, Value: s.input, Id: i}},
				stamped{s.ret, porcupine.Event{ClientId: s.client, Kind: porcupine.ReturnEvent, Value: s.output, Id: i}})
		}
		slices.SortStableFunc(evs, func(x, y stamped) int { return cmp.Compare(x.at, y.at) })
		for _, e := range evs {
			events = append(events, e.ev)
		}
		for _, m := range []struct {
			strict bool
			want   porcupine.CheckResult
		}{{true, tc.strict}, {false, tc.relaxed}} {
			model := linModel(m.strict)
			if got := porcupine.CheckOperationsTimeout(model, ops, 10*time.Second); got != m.want {
				t.Errorf("%s, strict=%v: operations checked %s, want %s", tc.name, m.strict, got, m.want)
			}
			if got := porcupine.CheckEventsTimeout(model, events, 10*time.Second); got != m.want {
				t.Errorf("%s, strict=%v: events checked %s, want %s", tc.name, m.strict, got, m.want)
			}
		}
	}
}
