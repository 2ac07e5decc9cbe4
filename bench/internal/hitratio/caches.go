package hitratio

import (
	"fmt"
	"io"
	"slices"
	"strings"

	theine "github.com/Yiling-J/theine-go"
	"github.com/dgraph-io/ristretto/v2"
	arc "github.com/hashicorp/golang-lru/arc/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"

	// Only for the default policy's registered name and the policies'
	// descriptions; the replays go through the public sim package.
	"github.com/cachekit/cachekit/internal/policy"
	"github.com/cachekit/cachekit/sim"
)

// Kind tells our caches, the peers and the optima apart.
type Kind string

// The kinds of contenders.
const (
	KindOurs    Kind = "ours"
	KindPeer    Kind = "peer"
	KindOptimum Kind = "optimum"
)

// Names of the contenders the report treats specially.
const (
	NameDefault   = "default"     // our default policy, driven directly
	NameCache     = sim.NameCache // the real concurrent cachekit.Cache
	NameOPT       = sim.NameOPT   // Bélády's MIN
	NameOPTBypass = sim.NameOPTBypass
)

// Contender is a cache that the suite is replayed through.
type Contender struct {
	Name string
	Kind Kind
	// Random reports whether the cache seeds itself at random (or runs
	// maintenance concurrently), so that its replays are repeated and
	// their mean reported.
	Random bool
	// Background reports whether the cache runs goroutines of its own
	// (maintenance, buffers drained concurrently), so that its hit ratio
	// depends on how promptly they are scheduled: Run replays such caches
	// one at a time, with the other processors idle.
	Background bool
	// Config says what the cache is and how it is built, for the report.
	Config string
	// New builds the cache for replaying t at capacity entries. The
	// caller closes it if it implements io.Closer.
	New func(t *sim.Trace, capacity int) (sim.Cache, error)
}

// Contenders returns every contender in report order: our default policy,
// the real Cache, our other registered policies (sorted), the peers, then
// OPT-bypass and OPT.
func Contenders() []Contender {
	out := []Contender{
		{Name: NameDefault, Kind: KindOurs, Config: "our default policy (" + policy.DefaultName + ": " + policy.Doc(policy.DefaultName) + "), driven directly by `sim`",
			New: simCache(NameDefault)},
		{Name: NameCache, Kind: KindOurs, Random: true, Background: true, Config: "the real concurrent `cachekit.Cache` with `MaxEntries: capacity` and the default policy, Get then Set on a miss from one goroutine (it seeds its sketch at random and runs part of its maintenance in the background)",
			New: simCache(NameCache)},
	}
	for _, name := range OurPolicies() {
		out = append(out, Contender{Name: name, Kind: KindOurs, Config: policy.Doc(name), New: simCache(name)})
	}
	out = append(out, Peers()...)
	out = append(out,
		Contender{Name: NameOPTBypass, Kind: KindOptimum, Config: "Bélády's MIN allowed to refuse a key whose next use is later than every resident key's: the ceiling for caches with an admission filter",
			New: simCache(NameOPTBypass)},
		Contender{Name: NameOPT, Kind: KindOptimum, Config: "Bélády's MIN: admits every key, evicts the resident key used again farthest in the future",
			New: simCache(NameOPT)},
	)
	return out
}

// OurPolicies returns the registered policies other than the default one,
// sorted: the default is reported as "default".
func OurPolicies() []string {
	var out []string
	for _, name := range sim.Names() {
		switch name {
		case policy.DefaultName, sim.NameCache, sim.NameOPT, sim.NameOPTBypass:
			continue
		}
		out = append(out, name)
	}
	return out
}

// SelectContenders returns the contenders named in a comma-separated list,
// in report order; an empty list selects them all.
func SelectContenders(list string) ([]Contender, error) {
	all := Contenders()
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var names []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.ContainsFunc(all, func(c Contender) bool { return c.Name == name }) {
			var known []string
			for _, c := range all {
				known = append(known, c.Name)
			}
			return nil, fmt.Errorf("unknown cache %q (known: %s)", name, strings.Join(known, ", "))
		}
		names = append(names, name)
	}
	var out []Contender
	for _, c := range all {
		if slices.Contains(names, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}

func simCache(spec string) func(*sim.Trace, int) (sim.Cache, error) {
	return func(t *sim.Trace, capacity int) (sim.Cache, error) { return t.NewCache(spec, capacity) }
}

// Peers returns the peer caches, in report order.
func Peers() []Contender {
	return []Contender{
		{Name: "otter", Kind: KindPeer, Random: true,
			Config: "otter v2 `Must(&Options{MaximumSize: capacity, Executor: func(f func()) { f() }})`: W-TinyLFU; the synchronous executor runs its maintenance on the calling goroutine, so every replay sees the evictions of the requests before it",
			New:    peer(newOtter)},
		{Name: "theine", Kind: KindPeer, Random: true, Background: true,
			Config: "theine `NewBuilder(capacity).Build()`, cost 1, `Wait()` after every `Set` (its writes reach the policy through a channel; waiting applies each before the next request): W-TinyLFU",
			New:    peer(newTheine)},
		{Name: "ristretto", Kind: KindPeer, Random: true, Background: true,
			Config: "ristretto v2 `NewCache(&Config{NumCounters: 10×capacity, MaxCost: capacity, BufferItems: 64, IgnoreInternalCost: true})`, cost 1, `Wait()` after every `Set`, so that no Set is dropped: its most favourable setting (under concurrent load it drops Sets, and would score lower). " +
				"Its Gets are recorded for its admission policy through lossy buffers, which drop a batch of records when its policy goroutine has not taken the previous ones yet",
			New: peer(newRistretto)},
		{Name: "golang-lru", Kind: KindPeer,
			Config: "hashicorp golang-lru v2 `New(capacity)`: LRU",
			New:    peer(newLRU)},
		{Name: "2q", Kind: KindPeer,
			Config: "hashicorp golang-lru v2 `New2Q(capacity)`: 2Q with its default ratios (25% recent, 50% ghosts)",
			New:    peer(new2Q)},
		{Name: "arc", Kind: KindPeer,
			Config: "hashicorp golang-lru arc/v2 `NewARC(capacity)`: ARC",
			New:    peer(newARC)},
	}
}

// peerCache is a peer behind sim.Cache: Access is a Get, then a Set on a
// miss.
type peerCache struct {
	get   func(uint64) bool
	set   func(uint64)
	close func()
	reads func() (kept, dropped uint64) // nil if the cache loses no reads
}

// ReadRecords reports how many Gets the cache recorded for its policy
// and how many records it dropped; ok is false for caches that record
// every Get.
func (p *peerCache) ReadRecords() (kept, dropped uint64, ok bool) {
	if p.reads == nil {
		return 0, 0, false
	}
	kept, dropped = p.reads()
	return kept, dropped, true
}

// ReadRecorder is implemented by caches that may drop the records of Gets
// meant for their policy.
type ReadRecorder interface {
	ReadRecords() (kept, dropped uint64, ok bool)
}

func (p *peerCache) Access(key uint64) bool {
	if p.get(key) {
		return true
	}
	p.set(key)
	return false
}

func (p *peerCache) Close() error {
	if p.close != nil {
		p.close()
	}
	return nil
}

var _ io.Closer = (*peerCache)(nil)

func peer(build func(capacity int) (*peerCache, error)) func(*sim.Trace, int) (sim.Cache, error) {
	return func(_ *sim.Trace, capacity int) (sim.Cache, error) {
		if capacity <= 0 {
			return nil, fmt.Errorf("capacity must be positive, got %d", capacity)
		}
		return build(capacity)
	}
}

func newOtter(capacity int) (*peerCache, error) {
	c, err := otter.New(&otter.Options[uint64, struct{}]{
		MaximumSize: capacity,
		Executor:    func(f func()) { f() },
	})
	if err != nil {
		return nil, err
	}
	return &peerCache{
		get:   func(k uint64) bool { _, ok := c.GetIfPresent(k); return ok },
		set:   func(k uint64) { c.Set(k, struct{}{}) },
		close: func() { c.StopAllGoroutines() },
	}, nil
}

func newTheine(capacity int) (*peerCache, error) {
	c, err := theine.NewBuilder[uint64, struct{}](int64(capacity)).Build()
	if err != nil {
		return nil, err
	}
	return &peerCache{
		get: func(k uint64) bool { _, ok := c.Get(k); return ok },
		set: func(k uint64) {
			c.Set(k, struct{}{}, 1)
			c.Wait()
		},
		close: c.Close,
	}, nil
}

func newRistretto(capacity int) (*peerCache, error) {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, struct{}]{
		NumCounters:        10 * int64(capacity),
		MaxCost:            int64(capacity),
		BufferItems:        64,
		IgnoreInternalCost: true,
		Metrics:            true, // for the share of dropped Get records
	})
	if err != nil {
		return nil, err
	}
	return &peerCache{
		get: func(k uint64) bool { _, ok := c.Get(k); return ok },
		set: func(k uint64) {
			c.Set(k, struct{}{}, 1)
			c.Wait()
		},
		close: c.Close,
		reads: func() (kept, dropped uint64) { return c.Metrics.GetsKept(), c.Metrics.GetsDropped() },
	}, nil
}

func newLRU(capacity int) (*peerCache, error) {
	c, err := lru.New[uint64, struct{}](capacity)
	return golangLRU(c, err, func(k uint64) { c.Add(k, struct{}{}) })
}

func new2Q(capacity int) (*peerCache, error) {
	c, err := lru.New2Q[uint64, struct{}](capacity)
	return golangLRU(c, err, func(k uint64) { c.Add(k, struct{}{}) })
}

func newARC(capacity int) (*peerCache, error) {
	c, err := arc.NewARC[uint64, struct{}](capacity)
	return golangLRU(c, err, func(k uint64) { c.Add(k, struct{}{}) })
}

// golangLRU adapts one of golang-lru's caches, c made with the error err;
// they share Get, but not Add's result, so set adds a key.
func golangLRU(c interface{ Get(uint64) (struct{}, bool) }, err error, set func(k uint64)) (*peerCache, error) {
	if err != nil {
		return nil, err
	}
	return &peerCache{
		get: func(k uint64) bool { _, ok := c.Get(k); return ok },
		set: set,
	}, nil
}
