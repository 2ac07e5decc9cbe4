package adapter

import "github.com/maypok86/otter/v2"

var otterInfo = Info{
	Name:       "otter",
	Bounded:    true,
	Throughput: true,
	Config:     "otter v2 `Must(&Options{MaximumSize: capacity})`: its defaults (W-TinyLFU, maintenance on its default executor).",
	New: func(capacity int) Cache {
		return &otterCache{c: otter.Must(&otter.Options[uint64, uint64]{MaximumSize: capacity})}
	},
}

type otterCache struct {
	c *otter.Cache[uint64, uint64]
}

func (a *otterCache) Name() string                  { return "otter" }
func (a *otterCache) Get(key uint64) (uint64, bool) { return a.c.GetIfPresent(key) }
func (a *otterCache) Set(key, value uint64)         { a.c.Set(key, value) }
func (a *otterCache) Close()                        { a.c.StopAllGoroutines() }
func (a *otterCache) Sync()                         { a.c.CleanUp() }
func (a *otterCache) Len() int                      { return a.c.EstimatedSize() }
