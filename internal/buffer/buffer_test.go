package buffer

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestQueuePushAtCountsPositions checks that PushAt numbers the pushes
// from 0 across laps of the ring, and that a refused push takes no
// position.
func TestQueuePushAtCountsPositions(t *testing.T) {
	q := NewQueue[int](4)
	want := uint64(0)
	for lap := range 3 {
		for i := range 4 {
			pos, ok := q.PushAt(i)
			if !ok || pos != want {
				t.Fatalf("lap %d: PushAt = %d, %v; want %d, true", lap, pos, ok, want)
			}
			want++
		}
		if _, ok := q.PushAt(-1); ok {
			t.Fatalf("lap %d: PushAt into a full queue accepted", lap)
		}
		for range 4 {
			q.Pop()
		}
	}
}

func TestQueueFIFOAndFull(t *testing.T) {
	q := NewQueue[int](5) // rounds up to 8
	if q.Cap() != 8 {
		t.Fatalf("Cap %d, want 8", q.Cap())
	}
	for lap := range 3 {
		for i := range 8 {
			if !q.Push(lap*100 + i) {
				t.Fatalf("lap %d: push %d refused", lap, i)
			}
		}
		if q.Push(-1) {
			t.Fatalf("lap %d: push into a full queue accepted", lap)
		}
		if q.Len() != 8 {
			t.Fatalf("Len %d, want 8", q.Len())
		}
		for i := range 8 {
			v, ok := q.Pop()
			if !ok || v != lap*100+i {
				t.Fatalf("lap %d: pop %d = %d, %v", lap, i, v, ok)
			}
		}
		if _, ok := q.Pop(); ok {
			t.Fatal("pop from an empty queue succeeded")
		}
	}
}

func TestQueueConcurrentProducers(t *testing.T) {
	const producers, each = 4, 5000
	q := NewQueue[int](64)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				for !q.Push(p*each + i) {
				}
			}
		}()
	}
	seen := make([]bool, producers*each)
	last := make([]int, producers)
	for i := range last {
		last[i] = -1
	}
	for n := 0; n < producers*each; {
		v, ok := q.Pop()
		if !ok {
			continue
		}
		if seen[v] {
			t.Fatalf("%d popped twice", v)
		}
		seen[v] = true
		p, i := v/each, v%each
		if i <= last[p] {
			t.Fatalf("producer %d: %d popped after %d", p, i, last[p])
		}
		last[p] = i
		n++
	}
	wg.Wait()
}

func TestStripedAddDrain(t *testing.T) {
	b := NewStriped[int](3) // rounds up to 4
	vals := make([]int, 100)
	for i := range stripeSize {
		if r := b.Add(&vals[i], 1); r != Added {
			t.Fatalf("add %d: %v", i, r)
		}
	}
	if r := b.Add(&vals[99], 1); r != Full {
		t.Fatalf("add into a full stripe: %v, want Full", r)
	}
	if r := b.Add(&vals[99], 2); r != Added {
		t.Fatalf("add into another stripe: %v", r)
	}
	var got []*int
	b.Drain(func(p *int) { got = append(got, p) })
	if len(got) != stripeSize+1 {
		t.Fatalf("drained %d, want %d", len(got), stripeSize+1)
	}
	for i := range stripeSize {
		if got[i] != &vals[i] {
			t.Fatalf("drained out of order at %d", i)
		}
	}
	got = got[:0]
	b.Drain(func(p *int) { got = append(got, p) })
	if len(got) != 0 {
		t.Fatalf("second drain returned %d elements", len(got))
	}
	// Four stripes: probes 0 and 4 choose one, 1 another.
	for i, want := range []uint64{1, 1, 2} {
		probe := []uint64{0, 1, 4}[i]
		if n := b.Inc(probe); n != want {
			t.Fatalf("Inc(%d) returned %d, want %d", probe, n, want)
		}
	}
	// Samples: a first goroutine on a stripe, another on the same stripe
	// (shared), the second again (not), and the second on another stripe
	// (its first sample there).
	if b.Sample(0, 3) || !b.Sample(4, 4) || b.Sample(0, 4) || b.Sample(1, 4) {
		t.Fatal("Sample misreported which stripes are shared")
	}
	if b.Count() != 3 {
		t.Fatalf("Count %d, want 3", b.Count())
	}
}

func TestStripedConcurrent(t *testing.T) {
	b := NewStriped[int](4)
	v := 7
	var wg sync.WaitGroup
	stop := make(chan struct{})
	drained := 0
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b.Add(&v, uint64(g+i))
			}
		}()
	}
	// One consumer drains while the producers run, until it has seen
	// plenty: every element it gets must be one that was added.
	for drained < 10000 {
		b.Drain(func(p *int) {
			if p != &v {
				t.Errorf("drained a pointer that was never added")
			}
			drained++
		})
	}
	close(stop)
	wg.Wait()
}

// TestSample checks that Sample reports a shared stripe exactly when
// consecutive samples come from different goroutines.
func TestSample(t *testing.T) {
	var last atomic.Uint64
	shared := 0
	sample := func(id uint64, times int) {
		for range times {
			if Sample(&last, id) {
				shared++
			}
		}
	}
	// One goroutine alone: never shared.
	sample(7, 10)
	if shared != 0 {
		t.Fatalf("one id alone reported shared %d times", shared)
	}
	// Another takes the stripe over: reported once, at its first sample.
	sample(9, 10)
	if shared != 1 {
		t.Fatalf("a takeover reported shared %d times, want 1", shared)
	}
	// Two goroutines whose samples alternate: every sample reports it.
	shared = 0
	for range 10 {
		sample(7, 1)
		sample(9, 1)
	}
	if shared != 20 {
		t.Fatalf("alternating samples reported shared %d times, want 20", shared)
	}
}
