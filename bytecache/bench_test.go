package bytecache

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

func benchKey(b []byte, i uint64) []byte {
	b = append(b[:0], "key-"...)
	return binary.BigEndian.AppendUint64(b, i)
}

// fill stores n entries with values of size vsize.
func fill(b *testing.B, c *Cache, n int, vsize int) {
	v := make([]byte, vsize)
	var k []byte
	for i := range n {
		k = benchKey(k, uint64(i))
		if err := c.Set(k, v, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B) {
	const n = 1 << 20
	c := newCache(b, Options{MaxBytes: 256 << 20})
	fill(b, c, n, 32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var k, dst []byte
		i := uint64(0)
		for pb.Next() {
			k = benchKey(k, i*0x9e3779b97f4a7c15%n)
			var ok bool
			if dst, ok = c.Get(dst[:0], k); !ok {
				b.Fatal("miss")
			}
			i++
		}
	})
}

func BenchmarkSet(b *testing.B) {
	c := newCache(b, Options{MaxBytes: 64 << 20})
	b.ReportAllocs()
	var seq atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		var k []byte
		v := make([]byte, 32)
		i := seq.Add(1) << 40
		for pb.Next() {
			k = benchKey(k, i)
			if err := c.Set(k, v, 0); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkMixed reads and writes 1M keys in parallel, one write in every
// writeEvery operations.
func BenchmarkMixed(b *testing.B) {
	for _, writeEvery := range []int{10, 1000} {
		b.Run(fmt.Sprintf("writes=1/%d", writeEvery), func(b *testing.B) {
			const n = 1 << 20
			c := newCache(b, Options{MaxBytes: 256 << 20})
			fill(b, c, n, 32)
			b.ReportAllocs()
			b.ResetTimer()
			var seq atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				var k, dst []byte
				v := make([]byte, 32)
				i := seq.Add(1) * 7919
				for pb.Next() {
					k = benchKey(k, i*0x9e3779b97f4a7c15%n)
					if i%uint64(writeEvery) == 0 {
						c.Set(k, v, 0)
					} else {
						dst, _ = c.Get(dst[:0], k)
					}
					i++
				}
			})
		})
	}
}

// BenchmarkGetSmall reads a working set that fits in the CPU caches: the
// cost of the code rather than of memory.
func BenchmarkGetSmall(b *testing.B) {
	const n = 1 << 10
	c := newCache(b, Options{MaxBytes: 32 << 20})
	fill(b, c, n, 32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var k, dst []byte
		i := uint64(0)
		for pb.Next() {
			k = benchKey(k, i%n)
			var ok bool
			if dst, ok = c.Get(dst[:0], k); !ok {
				b.Fatal("miss")
			}
			i++
		}
	})
}

// BenchmarkGC measures a forced garbage collection with the cache holding
// entries (values of 32 bytes): the entries should cost the collector
// nothing.
func BenchmarkGC(b *testing.B) {
	for _, n := range []int{0, 1e6, 10e6} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			c := newCache(b, Options{MaxBytes: 1 << 30})
			fill(b, c, n, 32)
			if got := c.Len(); got != n {
				b.Fatalf("Len %d, want %d", got, n)
			}
			runtime.GC()
			b.ResetTimer()
			for b.Loop() {
				runtime.GC()
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(c.Stats().IndexBytes)/(1<<20), "index-MiB")
		})
	}
}
