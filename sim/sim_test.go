package sim

import (
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cachekit/cachekit/internal/policy"
)

// silberschatz is the textbook reference string (Silberschatz, Galvin and
// Gagne, Operating System Concepts): with 3 frames OPT takes 9 faults and
// LRU 12, that is 11 and 8 hits of 20.
var silberschatz = []uint64{7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1}

// hits returns which requests of keys hit in c.
func hits(c Cache, keys []uint64) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		out[i] = c.Access(k)
	}
	return out
}

func run(t *testing.T, tr *Trace, spec string, capacity int) Result {
	t.Helper()
	r, err := tr.Run(spec, capacity)
	if err != nil {
		t.Fatalf("%s @%d: %v", spec, capacity, err)
	}
	return r
}

func TestOPTHandChecked(t *testing.T) {
	tr := NewTrace(silberschatz)
	if r := run(t, tr, NameOPT, 3); r != (Result{20, 11}) {
		t.Fatalf("opt on the textbook string: %+v, want 11 hits of 20", r)
	}
	// A loop of 3 keys in 2 entries. OPT: 1 2 3(evicts 2, next used at
	// 4, farther than 1 at 3) 1* 2(evicts 1: 6 > 5) 3* 1(evicts 3) 2* 3:
	// 3 hits. With bypass, 3 is not admitted (next use 5 > 4) and later
	// again (8 > 7): 1 2 3 1* 2* 3 1* 2* 3, 4 hits.
	loop := []uint64{1, 2, 3, 1, 2, 3, 1, 2, 3}
	tr = NewTrace(loop)
	o, err := NewOPT(tr, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{false, false, false, true, false, true, false, true, false}
	if got := hits(o, loop); !slices.Equal(got, want) {
		t.Fatalf("opt hits %v, want %v", got, want)
	}
	if o.Len() != 2 {
		t.Fatalf("opt holds %d keys, want 2", o.Len())
	}
	b, err := NewOPT(tr, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	want = []bool{false, false, false, true, true, false, true, true, false}
	if got := hits(b, loop); !slices.Equal(got, want) {
		t.Fatalf("opt-bypass hits %v, want %v", got, want)
	}
	// Enough room: only first requests miss.
	if r := run(t, tr, NameOPTBypass, 3); r.Hits != 6 {
		t.Fatalf("opt-bypass @3: %+v, want 6 hits", r)
	}
}

func TestOPTOutOfOrderPanics(t *testing.T) {
	o, err := NewOPT(NewTrace([]uint64{1, 2}), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	o.Access(1)
	defer func() {
		if recover() == nil {
			t.Fatal("OPT accepted a key that is not the trace's")
		}
	}()
	o.Access(3)
}

// bruteOPT is Bélády's algorithm the slow, obvious way: scan the future
// for each resident key.
func bruteOPT(keys []uint64, capacity int, bypass bool) uint64 {
	nextUse := func(k uint64, from int) int {
		for j := from; j < len(keys); j++ {
			if keys[j] == k {
				return j
			}
		}
		return len(keys)
	}
	var resident []uint64
	var hits uint64
	for i, k := range keys {
		if slices.Contains(resident, k) {
			hits++
			continue
		}
		if len(resident) < capacity {
			resident = append(resident, k)
			continue
		}
		far, farNext := 0, -1
		for j, r := range resident {
			if n := nextUse(r, i+1); n > farNext {
				far, farNext = j, n
			}
		}
		if bypass && nextUse(k, i+1) >= farNext {
			continue
		}
		resident[far] = k
	}
	return hits
}

// randomTrace returns a skewed random trace: Zipf over keys, mixed with
// a loop and a scan so that recency, frequency and OPT all differ.
func randomTrace(seed uint64, n int, keys uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, seed))
	z := rand.NewZipf(r, 1.1, 4, keys-1)
	out := make([]uint64, n)
	for i := range out {
		switch {
		case i%1000 < 200:
			out[i] = keys + uint64(i%(int(keys)/3+1)) // a loop
		case i%5000 < 100:
			out[i] = 1<<40 + uint64(i) // a scan
		default:
			out[i] = z.Uint64()
		}
	}
	return out
}

func TestOPTMatchesBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		keys := make([]uint64, 50+r.IntN(300))
		for i := range keys {
			keys[i] = r.Uint64N(uint64(5 + r.IntN(40)))
		}
		tr := NewTrace(keys)
		for _, capacity := range []int{1, 2, 3, 7, 20} {
			for _, bypass := range []bool{false, true} {
				name := NameOPT
				if bypass {
					name = NameOPTBypass
				}
				got, want := run(t, tr, name, capacity).Hits, bruteOPT(keys, capacity, bypass)
				if got != want {
					t.Fatalf("seed %d, %s @%d: %d hits, brute force %d", seed, name, capacity, got, want)
				}
			}
		}
	}
}

// TestOPTBounds checks every cache against the optimum on random traces.
// Every policy but W-TinyLFU admits each missed key (none refuses: the
// classic ones evict before they insert), and OPT bounds them; OPT with bypass
// bounds every cache of the same capacity; and OPT with bypass at capacity
// C is at most OPT at C+1 (its refused key fits in the extra entry). The
// concurrent cache may hold up to min(32, C/16) entries above its
// capacity between maintenance passes, so it is held to OPT at C+33.
func TestOPTBounds(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		keys := randomTrace(seed, 30_000, 3000)
		tr := NewTrace(keys)
		for _, capacity := range []int{1, 10, 100, 1000} {
			t.Logf("seed %d, capacity %d", seed, capacity)
			opt := run(t, tr, NameOPT, capacity).Hits
			bypass := run(t, tr, NameOPTBypass, capacity).Hits
			optMore := run(t, tr, NameOPT, capacity+1).Hits
			if bypass < opt || bypass > optMore {
				t.Fatalf("seed %d @%d: opt-bypass %d hits, want between opt %d and opt @+1 %d", seed, capacity, bypass, opt, optMore)
			}
			for _, name := range policy.Names() {
				p, err := NewPolicy(name, capacity, policySeed)
				if err != nil {
					t.Fatal(err)
				}
				h := Replay(p, keys).Hits
				t.Logf("  %-12s %6d hits (refused %d), opt %d, opt-bypass %d", name, h, p.refused, opt, bypass)
				if name != "tinylfu" && p.refused != 0 {
					// Only W-TinyLFU's admission filter refuses.
					t.Fatalf("seed %d @%d: %s refused %d admissions", seed, capacity, name, p.refused)
				}
				if h > bypass || p.refused == 0 && h > opt {
					t.Fatalf("seed %d @%d: %s %d hits (refused %d admissions) beats opt %d / opt-bypass %d",
						seed, capacity, name, h, p.refused, opt, bypass)
				}
			}
			h := run(t, tr, NameCache, capacity).Hits
			bound := run(t, tr, NameOPT, capacity+33).Hits
			t.Logf("  %-12s %6d hits, opt @+33 %d", NameCache, h, bound)
			if h > bound {
				t.Fatalf("seed %d @%d: cache %d hits beats opt @+33 %d", seed, capacity, h, bound)
			}
		}
	}
}

func TestLRUHandChecked(t *testing.T) {
	tr := NewTrace(silberschatz)
	if r := run(t, tr, "lru", 3); r != (Result{20, 8}) {
		t.Fatalf("lru on the textbook string: %+v, want 8 hits of 20", r)
	}
	// 1 2 3 in 3 entries, then 1 (hit, order 2 3 1), 4 (evicts 2), 2
	// (evicts 3), 1 (hit), 3 (evicts 4).
	keys := []uint64{1, 2, 3, 1, 4, 2, 1, 3}
	p, err := NewPolicy("lru", 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{false, false, false, true, false, false, true, false}
	if got := hits(p, keys); !slices.Equal(got, want) {
		t.Fatalf("lru hits %v, want %v", got, want)
	}
	if p.Len() != 3 {
		t.Fatalf("lru holds %d keys, want 3", p.Len())
	}
}

func TestPolicyEvicts(t *testing.T) {
	// Whatever the policy, a replay keeps it within its capacity (the
	// adapter panics if a policy evicts a node it does not hold). Every
	// key is requested twice in a row: a policy may still refuse it.
	for _, name := range policy.Names() {
		p, err := NewPolicy(name, 50, 1)
		if err != nil {
			t.Fatal(err)
		}
		for k := range uint64(10_000) {
			p.Access(k)
			p.Access(k)
			if p.Len() > 50 {
				t.Fatalf("%s: holds %d keys, capacity 50", name, p.Len())
			}
		}
	}
}

func TestConcurrentFits(t *testing.T) {
	// 300 keys, requested 10 times each in a shuffled order, in a cache of
	// 1000: every repeat hits.
	const keys, rounds = 300, 10
	seed := uint64(5)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	var trace []uint64
	for range rounds {
		round := make([]uint64, keys)
		for i := range round {
			round[i] = uint64(i) * 7919
		}
		r.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		trace = append(trace, round...)
	}
	c, err := NewConcurrent(1000)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res := Replay(c, trace); res != (Result{keys * rounds, keys * (rounds - 1)}) {
		t.Fatalf("cache: %+v, want %d hits of %d", res, keys*(rounds-1), keys*rounds)
	}
	// Through the Trace, by name, for every cache: all fit.
	tr := NewTrace(trace)
	for _, name := range Names() {
		if res := run(t, tr, name, keys); res.Hits != keys*(rounds-1) {
			t.Errorf("%s: %+v, want %d hits", name, res, keys*(rounds-1))
		}
	}
}

func TestConcurrentReplays(t *testing.T) {
	// One Trace replayed by many goroutines at once (run with -race): the
	// OPT caches share the next-use table the first one computes, and
	// every replay gives the result it gives alone.
	keys := randomTrace(7, 20_000, 2000)
	tr := NewTrace(keys)
	alone := map[string]Result{}
	names := slices.DeleteFunc(Names(), func(s string) bool { return s == NameCache })
	for _, n := range names {
		alone[n] = run(t, NewTrace(keys), n, 100)
	}
	var wg sync.WaitGroup
	for range 3 {
		for _, n := range names {
			wg.Go(func() {
				r, err := tr.Run(n, 100)
				if err != nil {
					t.Error(err)
				} else if r != alone[n] {
					t.Errorf("%s: %+v concurrently, %+v alone", n, r, alone[n])
				}
			})
		}
	}
	wg.Wait()
}

func TestCheck(t *testing.T) {
	for _, ok := range append(Names(), "default", "OPT", " Cache ") {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"no-such-policy", "opt:2", "tinylfu:x"} {
		if err := Check(bad); err == nil {
			t.Errorf("Check(%q) accepted it", bad)
		}
	}
	if _, err := NewTrace(nil).NewCache("no-such-policy", 10); err == nil || !strings.Contains(err.Error(), "no-such-policy") {
		t.Errorf("NewCache of an unknown policy: %v", err)
	}
	for _, n := range Names() {
		if _, err := NewTrace(nil).NewCache(n, 0); err == nil {
			t.Errorf("%s: capacity 0 accepted", n)
		}
	}
	if !slices.Contains(DefaultNames(), NameOPT) || !slices.Contains(DefaultNames(), policy.DefaultName) {
		t.Errorf("DefaultNames %v lacks opt or the default policy", DefaultNames())
	}
}

func TestEmptyTrace(t *testing.T) {
	for _, n := range Names() {
		if r := run(t, NewTrace(nil), n, 10); r != (Result{}) || r.HitRatio() != 0 {
			t.Errorf("%s: %+v on an empty trace", n, r)
		}
	}
}

func TestConcurrentIsCloser(t *testing.T) {
	c, err := NewTrace(nil).NewCache(NameCache, 1)
	if err != nil {
		t.Fatal(err)
	}
	cl, ok := c.(io.Closer)
	if !ok {
		t.Fatal("the cache adapter is not an io.Closer")
	}
	cl.Close()
}
