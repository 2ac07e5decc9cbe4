package adapter

import (
	arc "github.com/hashicorp/golang-lru/arc/v2"
	lru "github.com/hashicorp/golang-lru/v2"
)

var lruInfo = Info{
	Name:       "lru",
	Bounded:    true,
	Throughput: true,
	Config:     "golang-lru v2 `New(capacity)`: a doubly linked list and a map behind one mutex (every Get takes it, to move the entry).",
	New: func(capacity int) Cache {
		c, err := lru.New[uint64, uint64](capacity)
		if err != nil {
			panic(err)
		}
		return &lruCache{c: c}
	},
}

type lruCache struct {
	c *lru.Cache[uint64, uint64]
}

func (a *lruCache) Name() string                  { return "lru" }
func (a *lruCache) Get(key uint64) (uint64, bool) { return a.c.Get(key) }
func (a *lruCache) Set(key, value uint64)         { a.c.Add(key, value) }
func (a *lruCache) Close()                        {}
func (a *lruCache) Len() int                      { return a.c.Len() }

var twoQInfo = Info{
	Name:    "2q",
	Bounded: true,
	Config:  "golang-lru v2 `New2Q(capacity)`: its default ratios (25% recent, 50% ghost entries), one mutex. For hit ratios; not in the default throughput set.",
	New: func(capacity int) Cache {
		c, err := lru.New2Q[uint64, uint64](capacity)
		if err != nil {
			panic(err)
		}
		return &twoQCache{c: c}
	},
}

type twoQCache struct {
	c *lru.TwoQueueCache[uint64, uint64]
}

func (a *twoQCache) Name() string                  { return "2q" }
func (a *twoQCache) Get(key uint64) (uint64, bool) { return a.c.Get(key) }
func (a *twoQCache) Set(key, value uint64)         { a.c.Add(key, value) }
func (a *twoQCache) Close()                        {}
func (a *twoQCache) Len() int                      { return a.c.Len() }

var arcInfo = Info{
	Name:    "arc",
	Bounded: true,
	Config:  "golang-lru arc/v2 `NewARC(capacity)`, one mutex. For hit ratios; not in the default throughput set.",
	New: func(capacity int) Cache {
		c, err := arc.NewARC[uint64, uint64](capacity)
		if err != nil {
			panic(err)
		}
		return &arcCache{c: c}
	},
}

type arcCache struct {
	c *arc.ARCCache[uint64, uint64]
}

func (a *arcCache) Name() string                  { return "arc" }
func (a *arcCache) Get(key uint64) (uint64, bool) { return a.c.Get(key) }
func (a *arcCache) Set(key, value uint64)         { a.c.Add(key, value) }
func (a *arcCache) Close()                        {}
func (a *arcCache) Len() int                      { return a.c.Len() }
