package redis

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
)

// Benchmarks of the read paths against the shared standalone server (the
// full comparison, with percentiles and the stampede, is
// internal/cmd/tierbench): a plain GET; the tier's cold read (L1 miss, Redis
// hit); its Redis read alone; a loading.Cache over GET and a goroutine
// hand-off around GET (what a cold read cost before loading.Options.Probe
// let the tier read Redis on the caller's goroutine); an L1 hit; and the
// cold read and GET from 100 goroutines.
func BenchmarkRead(b *testing.B) {
	srv := standaloneB(b)
	be := backend{addrs: []string{srv.Addr()}}
	client, _ := be.clientB(b)
	ctx := context.Background()
	value := make([]byte, 100)
	src := loading.LoaderFunc[string, []byte](func(context.Context, string) ([]byte, error) { return value, nil })
	const nkeys = 10_000
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	mk := func(entries int) *Cache[[]byte] {
		o := Options[[]byte]{Client: client, Loader: src, Prefix: fmt.Sprintf("bench:%d:", runID), TTL: time.Hour, Timeout: time.Second}
		o.Local.TTL = time.Hour
		o.Local.MaxEntries = entries
		c, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		return c
	}
	w := mk(nkeys)
	for _, k := range keys {
		if err := w.Set(ctx, k, value); err != nil {
			b.Fatal(err)
		}
		client.Set(ctx, "raw:"+k, value, time.Hour)
	}
	b.Run("redis-get", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := client.Get(ctx, "raw:"+keys[i%nkeys]).Bytes(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tier-cold", func(b *testing.B) {
		c := mk(1)
		i := 0
		for b.Loop() {
			i++
			if _, err := c.Get(ctx, keys[i%nkeys]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-only", func(b *testing.B) {
		c := mk(1)
		i := 0
		for b.Loop() {
			i++
			c.read(ctx, c.prefix+keys[i%nkeys])
		}
	})
	b.Run("loading-over-get", func(b *testing.B) {
		l, _ := loading.New(loading.Options[string, []byte]{MaxEntries: 1, Loader: loading.LoaderFunc[string, []byte](func(ctx context.Context, k string) ([]byte, error) {
			return client.Get(ctx, "raw:"+k).Bytes()
		})})
		defer l.Close()
		i := 0
		for b.Loop() {
			i++
			l.Get(ctx, keys[i%nkeys])
		}
	})
	b.Run("goroutine-over-get", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			done := make(chan struct{})
			go func() {
				client.Get(ctx, "raw:"+keys[i%nkeys]).Bytes()
				close(done)
			}()
			<-done
		}
	})
	for _, entries := range []int{1, 1000} {
		b.Run(fmt.Sprintf("tier-cold-parallel-%d", entries), func(b *testing.B) {
			c := mk(entries)
			var next atomic.Uint64
			b.SetParallelism(50)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Get(ctx, keys[next.Add(1)%nkeys]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	b.Run("redis-get-parallel", func(b *testing.B) {
		var next atomic.Uint64
		b.SetParallelism(50)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := client.Get(ctx, "raw:"+keys[next.Add(1)%nkeys]).Bytes(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("tier-warm", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := w.Get(ctx, keys[i%nkeys]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
