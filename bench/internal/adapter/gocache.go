package adapter

import (
	"encoding/binary"

	gocache "github.com/patrickmn/go-cache"
)

var goCacheInfo = Info{
	Name:       "go-cache",
	Throughput: true,
	Config: "patrickmn/go-cache `New(NoExpiration, 0)`: no expiry, no janitor. It has no size bound, so it never evicts and grows with the key space. " +
		"It takes only string keys: the adapter passes the key's 8 bytes as a string (a Get converts on the stack; a Set allocates the key, " +
		"and boxes the value in an interface, as any user of go-cache with integer keys would).",
	New: func(int) Cache {
		return &goCacheCache{c: gocache.New(gocache.NoExpiration, 0)}
	},
}

type goCacheCache struct {
	c *gocache.Cache
}

func (a *goCacheCache) Name() string { return "go-cache" }

func (a *goCacheCache) Get(key uint64) (uint64, bool) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], key)
	v, ok := a.c.Get(string(b[:]))
	if !ok {
		return 0, false
	}
	return v.(uint64), true
}

func (a *goCacheCache) Set(key, value uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], key)
	a.c.Set(string(b[:]), value, gocache.NoExpiration)
}

func (a *goCacheCache) Close()   {}
func (a *goCacheCache) Len() int { return a.c.ItemCount() }
