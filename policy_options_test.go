package cachekit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Every named policy drives a working cache: the bound holds after
// maintenance, the bookkeeping stays consistent, and recently written keys
// can be found.
func TestEveryPolicyDrivesTheCache(t *testing.T) {
	names := append([]string{"", "default"}, PolicyNames()...)
	for _, name := range names {
		for _, weighted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%q/weighted=%v", name, weighted), func(t *testing.T) {
				opts := Options[int, int]{Policy: name, MaxEntries: 100}
				if weighted {
					opts = Options[int, int]{Policy: name, MaxWeight: 300, Weigher: func(k, v int) uint32 { return uint32((k%5 + 5) % 5) }}
				}
				c, err := New(opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				const seed = 11
				t.Logf("seed %d", seed)
				r := rand.New(rand.NewPCG(seed, seed))
				for i := range 20_000 {
					k := int(r.Uint64N(1000))
					if _, ok := c.Get(k); !ok {
						c.Set(k, i)
					}
					if r.IntN(50) == 0 {
						c.Delete(int(r.Uint64N(1000)))
					}
					if i%1000 == 0 {
						if err := c.checkInvariants(); err != nil {
							t.Fatalf("op %d: %v", i, err)
						}
					}
				}
				if err := c.checkInvariants(); err != nil {
					t.Fatal(err)
				}
				s := c.Stats()
				if s.Hits == 0 || s.Evicted == 0 {
					t.Fatalf("no hits or no evictions: %+v", s)
				}
				// An admission policy may refuse a newcomer while the cache
				// is full; with room, a key just written must be there.
				c.Clear()
				c.Set(-1, -1)
				if v, ok := c.Peek(-1); !ok || v != -1 {
					t.Fatalf("a key just written to an empty cache is missing: %v %v", v, ok)
				}
			})
		}
	}
}

func TestPolicyOptionErrors(t *testing.T) {
	for _, opts := range []Options[int, int]{
		{Policy: "no-such-policy", MaxEntries: 10},
		{Policy: "lru"}, // unbounded
		{Policy: "default:abc", MaxEntries: 10},
	} {
		_, err := New(opts)
		if !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: err %v, want ErrInvalidOptions", opts, err)
		}
	}
}

// Policy names are matched without regard to case or surrounding spaces,
// as Options.Policy says: " LRU " is lru (it evicts the least recently
// used key, which the default, refusing the newcomer, would not).
func TestPolicyNameCaseAndSpaces(t *testing.T) {
	c, err := New(Options[int, int]{Policy: " LRU ", MaxEntries: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Set(1, 1)
	c.Set(2, 2)
	c.Get(1)
	c.settle()
	c.Set(3, 3)
	c.settle()
	if _, ok := c.Get(2); ok {
		t.Fatal(`Policy " LRU ": key 2, the least recently used, was not evicted`)
	}
	for _, k := range []int{1, 3} {
		if _, ok := c.Get(k); !ok {
			t.Fatalf(`Policy " LRU ": key %d was evicted; want key 2 evicted`, k)
		}
	}
}

// Spaces around a name are ignored, so a Policy of spaces only is "", the
// default's name, which an unbounded cache accepts as it accepts "".
func TestBlankPolicyOnUnboundedCache(t *testing.T) {
	for _, name := range []string{"", " ", "\t "} {
		c, err := New(Options[int, int]{Policy: name})
		if err != nil {
			t.Fatalf("Policy %q on an unbounded cache: %v; want it taken as \"\"", name, err)
		}
		c.Set(1, 1)
		if v, ok := c.Get(1); !ok || v != 1 {
			t.Fatalf("Policy %q: Get(1) = %v, %v", name, v, ok)
		}
		c.Close()
	}
}
