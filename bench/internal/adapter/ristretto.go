package adapter

import "github.com/dgraph-io/ristretto/v2"

var ristrettoInfo = Info{
	Name:       "ristretto",
	Bounded:    true,
	Throughput: true,
	Config: "ristretto v2 `NewCache(&Config{NumCounters: 10×capacity, MaxCost: capacity, BufferItems: 64, IgnoreInternalCost: true})`, " +
		"every entry of cost 1: its README's recommendation (10× counters, 64 buffer items); IgnoreInternalCost so that MaxCost counts entries, " +
		"not entries plus ristretto's estimate of their memory. Sets are asynchronous and may be dropped under contention (that is its design, and part of its throughput).",
	New: func(capacity int) Cache {
		c, err := ristretto.NewCache(&ristretto.Config[uint64, uint64]{
			NumCounters:        10 * int64(capacity),
			MaxCost:            int64(capacity),
			BufferItems:        64,
			IgnoreInternalCost: true,
		})
		if err != nil {
			panic(err)
		}
		return &ristrettoCache{c: c}
	},
}

type ristrettoCache struct {
	c *ristretto.Cache[uint64, uint64]
}

func (a *ristrettoCache) Name() string                  { return "ristretto" }
func (a *ristrettoCache) Get(key uint64) (uint64, bool) { return a.c.Get(key) }
func (a *ristrettoCache) Set(key, value uint64)         { a.c.Set(key, value, 1) }
func (a *ristrettoCache) Close()                        { a.c.Close() }
func (a *ristrettoCache) Sync()                         { a.c.Wait() }

func (a *ristrettoCache) Len() int {
	n := 0
	a.c.IterValues(func(uint64) bool { n++; return false })
	return n
}
