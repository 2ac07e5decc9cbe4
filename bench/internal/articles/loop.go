package articles

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachekit/cachekit/bench/internal/adapter"
)

// StreamLen is the length of each goroutine's operation stream: 100,000,
// so that 0.1% is exactly 100 writes.
const StreamLen = 100_000

// Stream is one goroutine's pre-generated operations: uniformly random
// keys of the n filled ones, and exactly the requested share of writes
// at random positions. Generating them before timing keeps random number
// generation out of what is measured.
type Stream struct {
	idx   []uint32
	write []bool
	pos   int

	Ops, Gets, Hits uint64
}

// NewStream returns the stream of goroutine g for keys [0, n) and a write
// share of writePct percent, drawn from seed.
func NewStream(n int, writePct float64, seed uint64, g int) *Stream {
	if writePct < 0 || writePct > 100 {
		panic(fmt.Sprintf("articles: write share %v%% is out of range", writePct))
	}
	r := rand.New(rand.NewPCG(seed, uint64(g)))
	s := &Stream{idx: make([]uint32, StreamLen), write: make([]bool, StreamLen)}
	for i := range s.idx {
		s.idx[i] = uint32(r.IntN(n))
	}
	writes := int(writePct*StreamLen/100 + 0.5)
	for i := range writes {
		s.write[i] = true
	}
	r.Shuffle(StreamLen, func(a, b int) { s.write[a], s.write[b] = s.write[b], s.write[a] })
	s.pos = r.IntN(StreamLen)
	return s
}

// Writes returns the number of writes in the stream.
func (s *Stream) Writes() int {
	n := 0
	for _, w := range s.write {
		if w {
			n++
		}
	}
	return n
}

// Run performs operations while next reports true: a read is a Get of the
// key, a write a Set of the key with one of vals (chosen by the key).
func Run[V any](s *Stream, c adapter.StringCache[V], keys []string, vals []V, next func() bool) {
	pos, idx, write := s.pos, s.idx, s.write
	var ops, gets, hits uint64
	for next() {
		i := idx[pos]
		w := write[pos]
		pos++
		if pos == StreamLen {
			pos = 0
		}
		ops++
		if w {
			c.Set(keys[i], vals[int(i)%len(vals)])
			continue
		}
		gets++
		if _, ok := c.Get(keys[i]); ok {
			hits++
		}
	}
	s.pos = pos
	s.Ops += ops
	s.Gets += gets
	s.Hits += hits
}

// batch is the number of operations between two looks at the stop flag.
const batch = 256

// Timed runs one goroutine per stream against c for about d, all starting
// together, and returns the time until the last one stopped.
func Timed[V any](streams []*Stream, c adapter.StringCache[V], keys []string, vals []V, d time.Duration) time.Duration {
	var (
		stop  atomic.Bool
		ready sync.WaitGroup
		done  sync.WaitGroup
		start = make(chan struct{})
	)
	for _, s := range streams {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			n := 0
			next := func() bool {
				n++
				if n < batch {
					return true
				}
				n = 0
				return !stop.Load()
			}
			Run(s, c, keys, vals, next)
		}()
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	time.Sleep(d)
	stop.Store(true)
	done.Wait()
	return time.Since(t0)
}
