package policy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cachekit/cachekit/internal/node"
)

// Config is what every policy constructor gets.
type Config struct {
	// Max is the maximum weight (the number of entries for a cache
	// bounded by count). Always at least 1.
	Max uint64
	// Weighted says whether node weights vary.
	Weighted bool
	// Seed seeds the policy's randomness, if it has any.
	Seed uint64
	// Param is the policy's numeric parameter (for example LRFU's λ), or
	// NaN when the spec gave none and the policy's default applies.
	Param float64
	// Hash returns a tracked node's key hash, for policies that need one.
	// Never nil.
	Hash node.Hasher
}

// Constructor builds a policy from a Config, or reports why it cannot.
type Constructor func(Config) (Policy, error)

type registration struct {
	build Constructor
	doc   string
}

var registry = map[string]registration{}

// Register adds a policy under name. It is called from init functions;
// registering a name twice panics.
func Register(name, doc string, build Constructor) {
	if _, dup := registry[name]; dup {
		panic("policy: duplicate registration of " + name)
	}
	registry[name] = registration{build, doc}
}

// SkipsEarlyReads reports whether the cache may keep p from seeing the reads
// made while it is less than half full, as Caffeine does before it sizes its
// sketch: true for TinyLFU, which trades them for the speed of a read
// buffer left alone while the cache fills, and for the policies that ignore
// reads (FIFO, random). Every other policy orders its entries by each read
// (LRU's recency, CLOCK's and SIEVE's bits, S3-FIFO's frequencies, the
// counts and scores of LFU, LRFU and DLFU), so a read made while the cache
// fills still decides what is evicted once it is full: those must see them
// all.
func SkipsEarlyReads(p Policy) bool {
	switch p.(type) {
	case *TinyLFU, *FIFO, *Random:
		return true
	}
	return false
}

// DefaultName is the name of the default policy.
const DefaultName = "tinylfu"

// Names returns the registered policy names, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Doc returns the one-line description of a registered policy.
func Doc(name string) string { return registry[name].doc }

// New builds the policy named by spec: a registered name, "default" (or
// the empty string) for the default policy, optionally followed by a colon
// and a numeric parameter ("lrfu:0.001"). hash returns the key hash of the
// nodes the policy will track (see node.Hasher); it must not be nil.
func New(spec string, max uint64, weighted bool, seed uint64, hash node.Hasher) (Policy, error) {
	name, param, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	r, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (known: default, %s)", name, strings.Join(Names(), ", "))
	}
	if max == 0 {
		max = 1
	}
	if hash == nil {
		panic("policy: New with a nil Hasher")
	}
	pol, err := r.build(Config{Max: max, Weighted: weighted, Seed: seed, Param: param, Hash: hash})
	if given, _, _ := strings.Cut(strings.ToLower(spec), ":"); err != nil && strings.TrimSpace(given) != name {
		// The spec said "default": name the policy it stands for, or the
		// error would speak of a policy the caller never wrote.
		err = fmt.Errorf("policy %q is %s: %w", strings.TrimSpace(spec), name, err)
	}
	return pol, err
}

// ParseSpec splits a policy spec into its name (with "default" and "" mapped
// to DefaultName) and its parameter (NaN if absent).
func ParseSpec(spec string) (name string, param float64, err error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(spec), ":")
	// Spaces around the name and around the parameter are ignored ("lrfu :
	// 0.5" too, not just around the whole spec).
	name, arg = strings.TrimSpace(name), strings.TrimSpace(arg)
	if name == "" || name == "default" {
		name = DefaultName
	}
	param = math.NaN()
	if hasArg {
		param, err = strconv.ParseFloat(arg, 64)
		if errors.Is(err, strconv.ErrRange) && math.IsInf(param, 0) {
			err = nil // too large for a float: ±Inf, which each policy judges
		}
		if err == nil && param == 0 && underflows(arg) {
			// Too small for a float, but not zero: the smallest
			// positive (or negative) one, as too large is ±Inf.
			param = math.Copysign(math.SmallestNonzeroFloat64, param)
		}
		if err != nil || math.IsNaN(param) {
			// NaN stands for "no parameter": never one given.
			return "", 0, fmt.Errorf("policy %q: parameter %q is not a number", spec, arg)
		}
	}
	return name, param, nil
}

// underflows reports whether the number s, which ParseFloat read as zero,
// has a non-zero digit: it was too small for a float64.
func underflows(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, "+-"))
	digits, exp := "123456789", "e"
	if strings.HasPrefix(s, "0x") {
		s, digits, exp = s[2:], "123456789abcdef", "p"
	}
	if i := strings.Index(s, exp); i >= 0 {
		s = s[:i]
	}
	return strings.ContainsAny(s, digits)
}

func init() {
	Register("tinylfu", "W-TinyLFU whose window is sized by miniature simulations (by hill climbing when weighted) (the default)", func(c Config) (Policy, error) {
		if !math.IsNaN(c.Param) {
			return nil, fmt.Errorf("policy tinylfu takes no parameter")
		}
		return NewTinyLFU(c.Max, c.Weighted, c.Seed, c.Hash), nil
	})
}
