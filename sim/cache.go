package sim

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/cachekit/cachekit"
	"github.com/cachekit/cachekit/internal/mix"
	"github.com/cachekit/cachekit/internal/node"
	"github.com/cachekit/cachekit/internal/policy"
)

// Cache is a cache under simulation. It is not safe for concurrent use.
type Cache interface {
	// Access requests key and reports whether the cache held it. On a miss
	// the cache may admit the key.
	Access(key uint64) (hit bool)
}

// Names of the caches that are not policies of the registry.
const (
	NameCache     = "cache"      // the concurrent cachekit.Cache
	NameOPT       = "opt"        // Bélády's optimum
	NameOPTBypass = "opt-bypass" // Bélády's optimum with bypass
)

// Names returns every name a Trace can build a cache from: the registered
// policies (sorted), then "cache", "opt" and "opt-bypass". "default" is
// also accepted, for the default policy.
func Names() []string {
	return append(policy.Names(), NameCache, NameOPT, NameOPTBypass)
}

// DefaultNames returns the caches a simulation compares by default: the
// registered policies, "cache" and "opt".
func DefaultNames() []string {
	return append(policy.Names(), NameCache, NameOPT)
}

// Check reports whether spec names a cache that a Trace can build (a name
// of Names, or "default", or "" which also names the default policy,
// optionally with a policy's parameter as in "lrfu:0.001"), and if not,
// why.
func Check(spec string) error {
	switch special(spec) {
	case NameCache, NameOPT, NameOPTBypass:
		return nil
	}
	name, _, err := policy.ParseSpec(spec)
	if err != nil {
		return err
	}
	if special(name) != "" {
		return fmt.Errorf("policy %q: %s takes no parameter", spec, special(name))
	}
	if !slices.Contains(policy.Names(), name) {
		return fmt.Errorf("unknown policy %q (known: default, %s)", name, strings.Join(Names(), ", "))
	}
	_, err = policy.New(spec, 1, false, 1, node.KeyedHash)
	return err
}

// special returns spec normalised if it is one of the names this package
// implements itself, or "".
func special(spec string) string {
	switch s := strings.ToLower(strings.TrimSpace(spec)); s {
	case NameCache, NameOPT, NameOPTBypass:
		return s
	}
	return ""
}

// policySeed seeds every registered policy, for reproducible replays.
const policySeed = 1

// Trace is a loaded trace, ready to be replayed. It is safe for concurrent
// use: several goroutines may call its methods at the same time, and each
// replay it through its own Cache. The keys must not change while the
// Trace is in use.
type Trace struct {
	keys []uint64

	once   sync.Once
	future *future // for OPT, computed on first need
	err    error
}

// NewTrace returns a Trace of keys. It keeps keys, without copying.
func NewTrace(keys []uint64) *Trace { return &Trace{keys: keys} }

// Keys returns the trace's keys; the caller must not modify them. A nil
// Trace has none.
func (t *Trace) Keys() []uint64 {
	if t == nil {
		return nil
	}
	return t.keys
}

// Len returns the number of requests in the trace (0 for a nil Trace).
func (t *Trace) Len() int { return len(t.Keys()) }

// errNilTrace is the error of the methods that replay a nil Trace: a nil
// *Trace is more likely a load that failed unchecked than a wish to replay
// nothing (NewTrace(nil) is an empty trace).
var errNilTrace = errors.New("nil Trace: NewTrace(nil) is an empty one")

// NewCache returns an empty cache of capacity entries, named by spec (see
// Check), ready to replay t. A cache from "opt" or "opt-bypass" only
// accepts t's keys in t's order. The caller must close the cache if it
// implements io.Closer (the "cache" one does). A nil t is an error.
func (t *Trace) NewCache(spec string, capacity int) (Cache, error) {
	if t == nil {
		return nil, errNilTrace
	}
	switch special(spec) {
	case NameCache:
		return asCache(NewConcurrent(capacity))
	case NameOPT:
		return asCache(NewOPT(t, capacity, false))
	case NameOPTBypass:
		return asCache(NewOPT(t, capacity, true))
	}
	if err := Check(spec); err != nil {
		return nil, err // its reasons name this package's caches too
	}
	// The index never holds more keys than the trace has requests: a
	// short trace at a large capacity must not pre-size it to the
	// capacity.
	return asCache(newPolicy(spec, capacity, policySeed, len(t.keys)))
}

// asCache returns c as a Cache, or a nil Cache (not one holding a nil
// pointer) with err.
func asCache[C Cache](c C, err error) (Cache, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run replays t through a new cache of capacity entries named by spec, and
// closes the cache. A nil t is an error.
func (t *Trace) Run(spec string, capacity int) (Result, error) {
	c, err := t.NewCache(spec, capacity)
	if err != nil {
		return Result{}, err
	}
	if cl, ok := c.(io.Closer); ok {
		defer cl.Close()
	}
	return Replay(c, t.keys), nil
}

// Result is the outcome of a replay.
type Result struct {
	Requests uint64 // the number of requests
	Hits     uint64 // the number of requests that hit
}

// HitRatio returns Hits/Requests, or 0 when there were no requests.
func (r Result) HitRatio() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Requests)
}

// Replay requests every key of keys from c, in order, and counts the hits.
func Replay(c Cache, keys []uint64) Result {
	var hits uint64
	for _, k := range keys {
		if c.Access(k) {
			hits++
		}
	}
	return Result{Requests: uint64(len(keys)), Hits: hits}
}

func checkCapacity(capacity int) error {
	if capacity <= 0 {
		return fmt.Errorf("capacity must be positive, got %d", capacity)
	}
	return nil
}

// Policy is a Cache that drives a policy of the cache's registry directly,
// as the concurrent cache's maintenance would: Add on a miss, Access on a
// hit, then evict until the policy is within its capacity. Keys reach the
// policy's nodes as their hash through a bijective 64-bit mixer
// (MurmurHash3's finaliser), so sequential keys do not defeat the
// policies' frequency sketches.
type Policy struct {
	p     policy.Policy
	index map[uint64]*node.Keyed
	slab  []node.Keyed  // nodes not yet handed out
	free  []*node.Keyed // evicted nodes, handed out again first
	// refused counts misses whose key the policy evicted at once, that is
	// did not admit (tests tell must-admit policies by it).
	refused uint64
}

// NewPolicy returns a Policy of capacity entries running the registered
// policy named by spec ("default" for the default one, "name:param" for a
// parameter), seeded with seed if it uses randomness.
func NewPolicy(spec string, capacity int, seed uint64) (*Policy, error) {
	return newPolicy(spec, capacity, seed, capacity)
}

// newPolicy is NewPolicy with the index pre-sized for at most keys keys
// (at most capacity+1 are ever held at once).
func newPolicy(spec string, capacity int, seed uint64, keys int) (*Policy, error) {
	if err := checkCapacity(capacity); err != nil {
		return nil, err
	}
	p, err := policy.New(spec, uint64(capacity), false, seed, node.KeyedHash)
	if err != nil {
		return nil, err
	}
	return &Policy{p: p, index: make(map[uint64]*node.Keyed, min(capacity, keys, 1<<22)+1)}, nil
}

// Access implements Cache.
func (a *Policy) Access(key uint64) bool {
	if k := a.index[key]; k != nil {
		a.p.Access(&k.Node)
		return true
	}
	// Nodes come from slabs, to spare the allocator, and evicted nodes
	// are handed out again: a policy stops tracking a node when Evict
	// returns it. Never reusing them kept every slab that still held one
	// entry alive, 8 kB per entry at worst, growing with the trace's
	// length rather than with the cache's capacity.
	var k *node.Keyed
	if n := len(a.free); n > 0 {
		k, a.free = a.free[n-1], a.free[:n-1]
	} else {
		if len(a.slab) == 0 {
			a.slab = make([]node.Keyed, 256)
		}
		k, a.slab = &a.slab[0], a.slab[1:]
	}
	*k = node.Keyed{Node: node.Node{Weight: 1}, Hash: mix.Mix(key)}
	n := &k.Node
	a.index[key] = k
	a.p.Add(n)
	for v := a.p.Evict(); v != nil; v = a.p.Evict() {
		vk := a.index[mix.Unmix(node.KeyedHash(v))]
		if vk == nil || &vk.Node != v {
			panic("sim: policy evicted a node it does not track")
		}
		delete(a.index, mix.Unmix(vk.Hash))
		a.free = append(a.free, vk)
		if v == n {
			a.refused++
		}
	}
	return false
}

// Len returns the number of keys the cache holds.
func (a *Policy) Len() int { return len(a.index) }

// Concurrent is a Cache backed by the real concurrent
// cachekit.Cache[uint64, struct{}], bounded by MaxEntries: Access is a Get,
// then a Set on a miss. Its results may vary slightly from run to run (see
// the package documentation). Close it after use.
type Concurrent struct {
	c *cachekit.Cache[uint64, struct{}]
}

// NewConcurrent returns a Concurrent cache of capacity entries.
func NewConcurrent(capacity int) (*Concurrent, error) {
	if err := checkCapacity(capacity); err != nil {
		return nil, err
	}
	c, err := cachekit.New(cachekit.Options[uint64, struct{}]{MaxEntries: capacity})
	if err != nil {
		return nil, err
	}
	return &Concurrent{c}, nil
}

// Access implements Cache.
func (a *Concurrent) Access(key uint64) bool {
	if _, ok := a.c.Get(key); ok {
		return true
	}
	a.c.Set(key, struct{}{})
	return false
}

// Close stops the cache's background goroutine. It always returns nil.
func (a *Concurrent) Close() error {
	a.c.Close()
	return nil
}
