package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/cachekit/cachekit/bench/internal/adapter"
	"github.com/cachekit/cachekit/bench/internal/replay"
)

// tracesDir is where BenchmarkReplay reads the traces: $CACHEKIT_TRACES,
// or ../shared/traces beside the repository.
func tracesDir() string {
	if d := os.Getenv("CACHEKIT_TRACES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "traces")
}

// BenchmarkReplay is the talk's benchmark: GOMAXPROCS goroutines
// (b.RunParallel) replay a real trace through a fresh cache, each
// iteration a batch of 16 consecutive requests from a shared cursor (the
// trace wraps around): Get every key, then Set the misses. It reports
// hit/op, read-ns/op and write-ns/op as the talk does, and ops/s
// (requests). Fix the work with -benchtime (the talk used 5000x) so that
// hit ratios compare. Skipped when the traces are not there.
//
//	go test -run '^$' -bench 'Replay/trace=arc-oltp/' -benchtime 20000x -count 10 | tee new.txt
//	benchstat -col /cache new.txt
func BenchmarkReplay(b *testing.B) {
	for _, tr := range replay.DefaultTraces {
		b.Run("trace="+tr.Name, func(b *testing.B) {
			keys, err := replay.Load(tracesDir(), tr.Name)
			if err != nil {
				b.Skipf("trace %s: %v (set CACHEKIT_TRACES)", tr.Name, err)
			}
			for _, name := range []string{"cachekit", "otter", "theine", "ristretto", "lru", "xsync"} {
				info, _ := adapter.Lookup(name)
				b.Run("cache="+name, func(b *testing.B) {
					c := info.New(tr.Capacity)
					defer c.Close()
					var (
						cursor atomic.Int64
						total  = make(chan replay.Counts, runtime.GOMAXPROCS(0)) // one per RunParallel goroutine
						n      = int64(len(keys)) / replay.Batch * replay.Batch
					)
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						var w replay.Worker
						for pb.Next() {
							i := (cursor.Add(replay.Batch) - replay.Batch) % n
							w.Do(c, keys[i:i+replay.Batch])
						}
						total <- w.Counts
					})
					b.StopTimer()
					close(total)
					var ct replay.Counts
					for x := range total {
						ct.Add(x)
					}
					if ct.Gets > 0 {
						b.ReportMetric(float64(ct.Hits)/float64(ct.Gets), "hit/op")
						b.ReportMetric(float64(ct.GetTime.Nanoseconds())/float64(ct.Gets), "read-ns/op")
					}
					if ct.Sets > 0 {
						b.ReportMetric(float64(ct.SetTime.Nanoseconds())/float64(ct.Sets), "write-ns/op")
					}
					if sec := b.Elapsed().Seconds(); sec > 0 {
						b.ReportMetric(float64(ct.Gets)/sec, "ops/s")
					}
				})
			}
		})
	}
}
