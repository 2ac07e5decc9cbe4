package redis

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachekit/cachekit/loading"
	goredis "github.com/redis/go-redis/v9"
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
		defer cpuPerOp(b)()
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
		defer cpuPerOp(b)()
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
		defer cpuPerOp(b)()
		for b.Loop() {
			i++
			c.read(ctx, keys[i%nkeys])
		}
	})
	b.Run("loading-over-get", func(b *testing.B) {
		l, _ := loading.New(loading.Options[string, []byte]{MaxEntries: 1, Loader: loading.LoaderFunc[string, []byte](func(ctx context.Context, k string) ([]byte, error) {
			return client.Get(ctx, "raw:"+k).Bytes()
		})})
		defer l.Close()
		i := 0
		defer cpuPerOp(b)()
		for b.Loop() {
			i++
			l.Get(ctx, keys[i%nkeys])
		}
	})
	b.Run("goroutine-over-get", func(b *testing.B) {
		i := 0
		defer cpuPerOp(b)()
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
			defer cpuPerOp(b)()
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
		defer cpuPerOp(b)()
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
		defer cpuPerOp(b)()
		for b.Loop() {
			i++
			if _, err := w.Get(ctx, keys[i%nkeys]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// memGets is a go-redis hook that answers GETs from a map, without the
// network, and passes every other command on: with it a benchmark measures
// the client's CPU per read alone, which the network and redis-server,
// sharing the machine, make too noisy to compare otherwise.
type memGets map[string]string

func (memGets) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (m memGets) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		sc, ok := cmd.(*goredis.StringCmd)
		if !ok || cmdName(cmd) != "get" {
			return next(ctx, cmd)
		}
		if v, ok := m[cmd.Args()[1].(string)]; ok {
			sc.SetVal(v)
			return nil
		}
		sc.SetErr(goredis.Nil)
		return goredis.Nil
	}
}
func (memGets) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// BenchmarkReadCPU compares a plain GET with the tier's cold read (L1 miss,
// Redis hit, the value stored in L1) when GETs are answered in memory
// (memGets): the difference is what the tier adds to a GET's CPU.
func BenchmarkReadCPU(b *testing.B) {
	srv := standaloneB(b) // for the subscription; GETs never reach it
	ctx := context.Background()
	value := make([]byte, 100)
	const nkeys = 10_000
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	prefix := fmt.Sprintf("bench:cpu:%d:", runID)
	mem := memGets{}
	for _, k := range keys {
		mem["raw:"+k] = string(value)
	}
	client := goredis.NewUniversalClient(ClientDefaults(&goredis.UniversalOptions{Addrs: []string{srv.Addr()}}))
	client.AddHook(mem)
	b.Cleanup(func() { _ = client.Close() })
	src := loading.LoaderFunc[string, []byte](func(context.Context, string) ([]byte, error) { return value, nil })
	mk := func(b *testing.B, entries int) *Cache[[]byte] {
		o := Options[[]byte]{Client: client, Loader: src, Prefix: prefix, TTL: time.Hour, Timeout: time.Second}
		o.Local.TTL = time.Hour
		o.Local.MaxEntries = entries
		c, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		// The tier's values, with its fingerprint.
		for _, k := range keys {
			env, _ := BytesCodec{}.Append(newEnvelope(kindValue, 1, c.fp, time.Now().Add(time.Hour).UnixMilli(), len(value)), value)
			mem[prefix+k] = string(env)
		}
		b.Cleanup(c.Close)
		return c
	}
	b.Run("get", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := client.Get(ctx, "raw:"+keys[i%nkeys]).Bytes(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, entries := range []int{1, 1000} {
		b.Run(fmt.Sprintf("tier-cold-%d", entries), func(b *testing.B) {
			c := mk(b, entries)
			i := 0
			for b.Loop() {
				i++
				if _, err := c.Get(ctx, keys[i%nkeys]); err != nil {
					b.Fatal(err)
				}
			}
			if st := c.Stats(); st.L2Hits < uint64(b.N)*9/10 {
				b.Fatalf("%d L2 hits for %d reads: the reads were not cold", st.L2Hits, b.N)
			}
		})
	}
}
