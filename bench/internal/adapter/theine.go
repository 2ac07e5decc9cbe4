package adapter

import theine "github.com/Yiling-J/theine-go"

var theineInfo = Info{
	Name:       "theine",
	Bounded:    true,
	Throughput: true,
	Config:     "theine `NewBuilder(capacity).Build()`, every entry of cost 1: its defaults (W-TinyLFU, no doorkeeper).",
	New: func(capacity int) Cache {
		c, err := theine.NewBuilder[uint64, uint64](int64(capacity)).Build()
		if err != nil {
			panic(err)
		}
		return &theineCache{c: c}
	},
}

type theineCache struct {
	c *theine.Cache[uint64, uint64]
}

func (a *theineCache) Name() string                  { return "theine" }
func (a *theineCache) Get(key uint64) (uint64, bool) { return a.c.Get(key) }
func (a *theineCache) Set(key, value uint64)         { a.c.Set(key, value, 1) }
func (a *theineCache) Close()                        { a.c.Close() }
func (a *theineCache) Sync()                         { a.c.Wait() }
func (a *theineCache) Len() int                      { return a.c.Len() }
