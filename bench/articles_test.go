package bench

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/articles"
)

var articlesEntries = flag.Int("articles.entries", 1_000_000, "entries of BenchmarkArticles")

// articleWrites are the write shares of BenchmarkArticles: the article's
// 10% and 0.1%, and pure Gets and pure Sets.
var articleWrites = []float64{0, 0.1, 10, 100}

var (
	filledMu sync.Mutex
	filled   adapter.StringCache[articles.Value] // the cache being benchmarked, filled once
)

// filledCache returns the named cache filled with n entries, building it
// (and closing the previous one) only when the name changes, so that a
// cache is filled once for all its sub-benchmarks.
func filledCache(b *testing.B, name string, n int) adapter.StringCache[articles.Value] {
	b.Helper()
	filledMu.Lock()
	defer filledMu.Unlock()
	if filled != nil && filled.Name() == name {
		return filled
	}
	if filled != nil {
		filled.Close()
		filled = nil
		runtime.GC()
	}
	c, err := articles.New(name, n)
	if err != nil {
		b.Fatal(err)
	}
	articles.Fill(c, n)
	filled = c
	return c
}

// BenchmarkArticles is the articles' table as Go benchmarks: every cache
// filled with 1M entries of struct{int; bool; string} (the byte caches
// encoding them), GOMAXPROCS goroutines (b.RunParallel) reading and
// writing uniformly random keys at 0%, 0.1%, 10% and 100% writes.
// Names: Articles/cache=fastcache/writes=10. Memory is measured by
// cmd/articles, in a fresh process per cache; here only time.
//
//	go test -run '^$' -bench 'Articles/cache=(bytecache|fastcache)/' -count 10 | tee new.txt
//	benchstat -col /cache new.txt
func BenchmarkArticles(b *testing.B) {
	n := *articlesEntries
	keys, vals := articles.Keys(n)
	names := append([]string{}, articles.DefaultCaches...)
	for _, name := range names {
		b.Run("cache="+name, func(b *testing.B) {
			for _, pct := range articleWrites {
				b.Run(fmt.Sprintf("writes=%g", pct), func(b *testing.B) {
					c := filledCache(b, name, n)
					goroutines := runtime.GOMAXPROCS(0)
					streams := make([]*articles.Stream, goroutines)
					for g := range streams {
						streams[g] = articles.NewStream(n, pct, uint64(b.N), g)
					}
					var next atomic.Int64
					b.ReportAllocs()
					runtime.GC()
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						s := streams[next.Add(1)-1]
						articles.Run(s, c, keys, vals, pb.Next)
					})
					b.StopTimer()
					if sec := b.Elapsed().Seconds(); sec > 0 {
						b.ReportMetric(float64(b.N)/sec, "ops/s")
					}
				})
			}
		})
	}
	filledMu.Lock()
	if filled != nil {
		filled.Close()
		filled = nil
	}
	filledMu.Unlock()
}
