package adapter

import (
	"slices"
	"sync"
	"testing"
)

func TestRegistry(t *testing.T) {
	all := All()
	if len(all) == 0 || all[0].Name != "cachekit" {
		t.Fatalf("All() = %v, want cachekit first", Names())
	}
	for _, name := range []string{"cachekit", "otter", "theine", "ristretto", "lru", "2q", "arc",
		"go-cache", "sync.Map", "xsync", "rwmutex-map", "sharded-map"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("adapter %q is missing", name)
		}
	}
	for _, info := range Throughput() {
		if info.Name == "2q" || info.Name == "arc" {
			t.Errorf("%s is in the default throughput set", info.Name)
		}
	}
	if got, _ := Select(""); len(got) != len(Throughput()) {
		t.Errorf(`Select("") has %d caches, want %d`, len(got), len(Throughput()))
	}
	if got, _ := Select("all"); len(got) != len(all) {
		t.Errorf(`Select("all") has %d caches, want %d`, len(got), len(all))
	}
	got, err := Select("otter, cachekit")
	if err != nil || len(got) != 2 || got[0].Name != "otter" || got[1].Name != "cachekit" {
		t.Errorf(`Select("otter, cachekit") = %v, %v`, got, err)
	}
	for _, bad := range []string{"nope", "otter,otter", "otter,"} {
		if _, err := Select(bad); err == nil {
			t.Errorf("Select(%q) succeeded", bad)
		}
	}
}

// settle waits until c has applied the writes made so far, if it applies
// them asynchronously.
func settle(c Cache) {
	if s, ok := c.(Syncer); ok {
		s.Sync()
	}
}

// TestContract checks every adapter: a Set is found by a later Get, an
// overwrite replaces the value, an absent key misses, a bounded cache
// roughly respects its capacity once settled, and an unbounded one keeps
// everything.
func TestContract(t *testing.T) {
	const capacity = 1000
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			c := info.New(capacity)
			defer c.Close()
			if c.Name() != info.Name {
				t.Errorf("Name() = %q, want %q", c.Name(), info.Name)
			}
			if _, ok := c.Get(42); ok {
				t.Errorf("Get of an absent key hit")
			}
			for k := uint64(1); k <= 100; k++ {
				c.Set(k, k*10)
				settle(c)
				if v, ok := c.Get(k); !ok || v != k*10 {
					t.Fatalf("Get(%d) after Set = %d, %v; want %d, true", k, v, ok, k*10)
				}
			}
			c.Set(7, 7777)
			settle(c)
			if v, ok := c.Get(7); !ok || v != 7777 {
				t.Errorf("Get(7) after an overwrite = %d, %v; want 7777, true", v, ok)
			}

			const n = 10 * capacity
			for k := uint64(1000); k < 1000+n; k++ {
				c.Set(k, k)
				if k%512 == 0 {
					settle(c) // keep asynchronous write buffers from dropping
				}
			}
			settle(c)
			l, ok := c.(Lener)
			if !ok {
				t.Fatalf("%s does not implement Lener", info.Name)
			}
			got := l.Len()
			t.Logf("Len() = %d after %d distinct Sets (capacity %d)", got, n+100, capacity)
			if info.Bounded {
				// cachekit may exceed its bound by a write batch (at most
				// 32) until maintenance runs; allow a little more for the
				// others' estimates.
				if got > capacity+capacity/10 || got < capacity/2 {
					t.Errorf("Len() = %d after %d distinct Sets, want about %d", got, n+100, capacity)
				}
			} else if got != n+100 {
				t.Errorf("Len() = %d after %d distinct Sets into an unbounded cache", got, n+100)
			}
		})
	}
}

// TestConcurrent drives every adapter from several goroutines, for the
// race detector.
func TestConcurrent(t *testing.T) {
	for _, info := range All() {
		t.Run(info.Name, func(t *testing.T) {
			t.Parallel()
			c := info.New(256)
			defer c.Close()
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range uint64(2000) {
						k := (i*uint64(g+1) + i>>3) % 512
						if i%4 == 0 {
							c.Set(k, k)
						} else if v, ok := c.Get(k); ok && v != k {
							t.Errorf("Get(%d) = %d", k, v)
							return
						}
					}
				}()
			}
			wg.Wait()
		})
	}
}

func TestNamesUnique(t *testing.T) {
	names := Names()
	s := slices.Clone(names)
	slices.Sort(s)
	if len(slices.Compact(s)) != len(names) {
		t.Errorf("duplicate names: %v", names)
	}
}
