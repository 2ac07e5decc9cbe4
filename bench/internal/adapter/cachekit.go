package adapter

import "github.com/cachekit/cachekit"

var cachekitInfo = Info{
	Name:       "cachekit",
	Bounded:    true,
	Throughput: true,
	Config:     "`cachekit.New(Options{MaxEntries: capacity, DisableStats: true})`: the defaults (W-TinyLFU with an adaptive window, no TTL) without hit and miss counting, like the other caches' defaults.",
	New: func(capacity int) Cache {
		return &cachekitCache{c: cachekit.Must(cachekit.Options[uint64, uint64]{MaxEntries: capacity, DisableStats: true})}
	},
}

type cachekitCache struct {
	c *cachekit.Cache[uint64, uint64]
}

func (a *cachekitCache) Name() string                  { return "cachekit" }
func (a *cachekitCache) Get(key uint64) (uint64, bool) { return a.c.Get(key) }
func (a *cachekitCache) Set(key, value uint64)         { a.c.Set(key, value) }
func (a *cachekitCache) Close()                        { a.c.Close() }
func (a *cachekitCache) Len() int                      { return a.c.Len() }
