package wheel

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"
)

// seed is the fixed seed of every randomized test; tests log it.
const seed = 0x5eed_c0ffee

// newRand returns the deterministic generator of a test and logs its seed.
func newRand(t testing.TB, stream uint64) *rand.Rand {
	t.Helper()
	t.Logf("rand seed: PCG(%#x, %d)", uint64(seed), stream)
	return rand.New(rand.NewPCG(seed, stream))
}

// addSat returns a+b saturated to the int64 range.
func addSat(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// checkInvariants verifies the wheel's internal structure: list links,
// occupancy masks, the placement of every node relative to the wheel's time,
// and the node count.
func checkInvariants(t *testing.T, w *Wheel) {
	t.Helper()
	count := 0
	walk := func(s *Timer, ok func(n *Timer) bool) int {
		c := 0
		prev := s
		for n := s.next; n != s; n = n.next {
			if n.prev != prev {
				t.Fatalf("broken back link")
			}
			if !ok(n) {
				t.Fatalf("node with deadline %d misplaced (time key %#x)", n.Deadline, w.time)
			}
			prev = n
			c++
			if c > w.len+1 {
				t.Fatalf("list longer than Len")
			}
		}
		if s.prev != prev {
			t.Fatalf("broken sentinel back link")
		}
		return c
	}
	count += walk(&w.overdue, func(n *Timer) bool { return key(n.Deadline) <= w.time })
	count += walk(&w.pending, func(n *Timer) bool {
		d := key(n.Deadline)
		return d >= w.time
	})
	for l := range w.buckets {
		if w.buckets[l] == nil {
			if w.occupied[l] != 0 {
				t.Fatalf("level %d: occupied bits %x without buckets", l, w.occupied[l])
			}
			continue
		}
		for i := range w.buckets[l] {
			s := &w.buckets[l][i]
			c := walk(s, func(n *Timer) bool {
				d := key(n.Deadline)
				if d <= w.time {
					return false
				}
				lv := (63 - bits.LeadingZeros64(d^w.time)) / digitBits
				return lv == l && int(d>>(uint(l)*digitBits)&digitMask) == i
			})
			occupied := w.occupied[l]&(1<<i) != 0
			if occupied != (c > 0) {
				t.Fatalf("level %d bucket %d: occupied bit %v with %d nodes", l, i, occupied, c)
			}
			count += c
		}
	}
	if count != w.len {
		t.Fatalf("linked nodes %d, Len %d", count, w.len)
	}
}

// randDeadline returns a random deadline around now: sometimes past (by up
// to weeks), sometimes math.MaxInt64, usually now plus a log-uniform delay
// from 1 ns to ~2^51 ns (~26 days). It is never 0.
func randDeadline(r *rand.Rand, now int64) int64 {
	var d int64
	switch k := r.IntN(100); {
	case k < 12:
		d = addSat(now, -r.Int64N(int64(1)<<uint(r.IntN(51))+1))
	case k < 15:
		d = math.MaxInt64
	case k < 17:
		d = math.MinInt64 + r.Int64N(3)
	default:
		d = addSat(now, r.Int64N(int64(1)<<uint(r.IntN(52)))+1)
	}
	if d == 0 {
		d = 1
	}
	return d
}

// randStep returns a random, log-uniform advance of the clock, sometimes 0.
func randStep(r *rand.Rand) int64 {
	if r.IntN(10) == 0 {
		return 0
	}
	return r.Int64N(int64(1) << uint(r.IntN(50)))
}

// randBudget returns a random Advance budget, including 1 and unlimited.
func randBudget(r *rand.Rand) int {
	switch r.IntN(5) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return -r.IntN(3)
	case 3:
		return 1 + r.IntN(4)
	default:
		return 1 + r.IntN(64)
	}
}

// TestModel runs random operations against a map of scheduled nodes.
func TestModel(t *testing.T) {
	starts := []struct {
		name  string
		start int64
	}{
		{"zero", 0},
		{"small", 1_234_567},
		{"negative", -5 * int64(time.Hour)},
		{"minInt", math.MinInt64},
		{"nearMaxInt", math.MaxInt64 - 1<<54},
		{"large", 1 << 62},
	}
	for si, st := range starts {
		t.Run(st.name, func(t *testing.T) {
			r := newRand(t, uint64(si))
			runModel(t, r, st.start, 300, 20_000)
		})
	}
}

// runModel performs ops random operations on a pool of size nodes.
func runModel(t *testing.T, r *rand.Rand, start int64, size, ops int) {
	w := New(start)
	nodes := make([]Timer, size)
	scheduled := make(map[*Timer]bool) // the reference
	now := start                       // the latest now passed to Advance
	completed := true                  // whether the last Advance returned true
	var expirations, advances, incomplete int

	schedule := func(n *Timer, at int64) {
		n.Deadline = randDeadline(r, at)
		w.Schedule(n)
		scheduled[n] = true
	}
	deschedule := func(n *Timer) {
		w.Deschedule(n)
		delete(scheduled, n)
	}
	var callNow int64
	expire := func(n *Timer) {
		expirations++
		if !scheduled[n] {
			t.Fatalf("expired node (deadline %d) that is not scheduled", n.Deadline)
		}
		if n.Deadline > callNow {
			t.Fatalf("expired early: deadline %d > now %d", n.Deadline, callNow)
		}
		if w.Scheduled(n) || n.next != nil || n.prev != nil {
			t.Fatalf("expired node is still linked")
		}
		delete(scheduled, n)
		if w.Len() != len(scheduled) {
			t.Fatalf("in expire: Len %d, want %d", w.Len(), len(scheduled))
		}
		// Sometimes change other nodes (or this one) from the callback.
		switch r.IntN(10) {
		case 0, 1:
			m := &nodes[r.IntN(len(nodes))]
			if !scheduled[m] {
				schedule(m, callNow)
			}
		case 2:
			deschedule(&nodes[r.IntN(len(nodes))])
		}
	}

	for op := range ops {
		n := &nodes[r.IntN(len(nodes))]
		switch k := r.IntN(100); {
		case k < 40: // (re)schedule
			if scheduled[n] {
				deschedule(n)
			}
			schedule(n, now)
		case k < 55:
			deschedule(n)
		case k < 60: // deschedule twice / of an unscheduled node
			deschedule(n)
			deschedule(n)
		default: // advance
			if completed || r.IntN(2) == 0 {
				now = addSat(now, randStep(r))
			}
			callNow = now
			before := w.visited
			budget := randBudget(r)
			completed = w.Advance(now, budget, expire)
			advances++
			if budget > 0 && w.visited-before > uint64(budget) {
				t.Fatalf("visited %d nodes with budget %d", w.visited-before, budget)
			}
			if completed {
				for m := range scheduled {
					if m.Deadline <= now {
						t.Fatalf("op %d: Advance(%d) returned true but node with deadline %d is still scheduled", op, now, m.Deadline)
					}
				}
				if key(now) != w.time {
					t.Fatalf("time key %#x after complete Advance(%d)", w.time, now)
				}
			} else {
				incomplete++
			}
		}
		if w.Len() != len(scheduled) {
			t.Fatalf("op %d: Len %d, want %d", op, w.Len(), len(scheduled))
		}
		if w.Scheduled(n) != scheduled[n] {
			t.Fatalf("op %d: Scheduled %v, want %v", op, w.Scheduled(n), scheduled[n])
		}
		if op%500 == 0 {
			checkInvariants(t, w)
			for i := range nodes {
				if w.Scheduled(&nodes[i]) != scheduled[&nodes[i]] {
					t.Fatalf("op %d: node %d: Scheduled %v, want %v", op, i, w.Scheduled(&nodes[i]), scheduled[&nodes[i]])
				}
			}
		}
	}

	// Finish: advance to the end of time with budget 1 and check that
	// everything expires exactly once.
	now = math.MaxInt64
	callNow = now
	for steps := 0; !w.Advance(now, 1, expire); steps++ {
		if steps > 100*len(nodes)*numLevels {
			t.Fatalf("Advance with budget 1 does not finish")
		}
	}
	if len(scheduled) != 0 || w.Len() != 0 {
		t.Fatalf("after Advance(MaxInt64): %d scheduled, Len %d", len(scheduled), w.Len())
	}
	checkInvariants(t, w)
	t.Logf("%d ops: %d advances (%d incomplete), %d expirations, %d visits", ops, advances, incomplete, expirations, w.visited)
}

// collect returns an expire callback that appends to *out.
func collect(out *[]*Timer) func(*Timer) {
	return func(n *Timer) { *out = append(*out, n) }
}

// TestFarFuture schedules deadlines beyond the coarse levels, up to
// math.MaxInt64.
func TestFarFuture(t *testing.T) {
	const day = int64(24 * time.Hour)
	start := int64(3 * time.Second)
	w := New(start)
	deadlines := []int64{
		math.MaxInt64,
		math.MaxInt64 - 1,
		start + 6*day + day/2,
		start + 7*day,
		start + 30*day,
		start + 365*day,
		start + 100*365*day,
		1 << 62,
	}
	nodes := make([]Timer, len(deadlines))
	for i, d := range deadlines {
		nodes[i].Deadline = d
		w.Schedule(&nodes[i])
	}
	checkInvariants(t, w)
	var got []*Timer
	steps := []int64{start + 6*day, start + 7*day, start + 365*day - 1, 1<<62 - 1, 1 << 62, math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64}
	for _, now := range steps {
		got = got[:0]
		if !w.Advance(now, 0, collect(&got)) {
			t.Fatalf("Advance(%d) with no budget returned false", now)
		}
		checkInvariants(t, w)
		want := 0
		for i := range nodes {
			if nodes[i].Deadline <= now {
				want++
				if w.Scheduled(&nodes[i]) {
					t.Fatalf("Advance(%d): node with deadline %d still scheduled", now, nodes[i].Deadline)
				}
			} else if !w.Scheduled(&nodes[i]) {
				t.Fatalf("Advance(%d): node with deadline %d expired early", now, nodes[i].Deadline)
			}
		}
		if w.Len() != len(nodes)-want {
			t.Fatalf("Advance(%d): Len %d, want %d", now, w.Len(), len(nodes)-want)
		}
		for _, n := range got {
			if n.Deadline > now {
				t.Fatalf("Advance(%d) expired deadline %d", now, n.Deadline)
			}
		}
	}
	if w.Len() != 0 {
		t.Fatalf("Len %d at the end of time", w.Len())
	}
}

// TestPastDeadlines schedules nodes whose deadline has already passed.
func TestPastDeadlines(t *testing.T) {
	now := int64(1000)
	w := New(now)
	deadlines := []int64{5, -7, now, now - 1, math.MinInt64, now + 1}
	nodes := make([]Timer, len(deadlines))
	for i, d := range deadlines {
		nodes[i].Deadline = d
		w.Schedule(&nodes[i])
		if !w.Scheduled(&nodes[i]) {
			t.Fatalf("node %d not scheduled", i)
		}
	}
	if w.Len() != len(nodes) {
		t.Fatalf("Len %d, want %d", w.Len(), len(nodes))
	}
	checkInvariants(t, w)
	var got []*Timer
	if !w.Advance(now, 0, collect(&got)) {
		t.Fatal("Advance returned false")
	}
	if len(got) != len(nodes)-1 || w.Len() != 1 || !w.Scheduled(&nodes[len(nodes)-1]) {
		t.Fatalf("expired %d, Len %d; want %d, 1", len(got), w.Len(), len(nodes)-1)
	}
	// Scheduling in the past after the time moved: due at the next Advance,
	// even one at the same now.
	got = got[:0]
	nodes[0].Deadline = now - 500
	w.Schedule(&nodes[0])
	if !w.Advance(now, 1, collect(&got)) || len(got) != 1 || got[0] != &nodes[0] {
		t.Fatalf("past node not expired by Advance at the same time: %d expired", len(got))
	}
	got = got[:0]
	if !w.Advance(now+1, 0, collect(&got)) || len(got) != 1 || got[0] != &nodes[len(nodes)-1] || w.Len() != 0 {
		t.Fatalf("expired %d, Len %d", len(got), w.Len())
	}
}

// TestAdvanceBackwards checks that an earlier now is a no-op.
func TestAdvanceBackwards(t *testing.T) {
	w := New(100)
	var n1, n2 Timer
	n1.Deadline, n2.Deadline = 150, 90
	w.Schedule(&n1)
	if !w.Advance(200, 0, nil) || w.Len() != 0 {
		t.Fatalf("Advance(200): Len %d", w.Len())
	}
	w.Schedule(&n2) // due: 90 <= 200
	called := false
	if !w.Advance(50, 0, func(*Timer) { called = true }) || called || w.Len() != 1 {
		t.Fatalf("Advance backwards: called %v, Len %d", called, w.Len())
	}
	if !w.Advance(200, 0, func(*Timer) { called = true }) || !called || w.Len() != 0 {
		t.Fatalf("Advance at the same time: called %v, Len %d", called, w.Len())
	}
}

// TestDescheduleUnscheduled checks that Deschedule of a node that is not
// scheduled does nothing.
func TestDescheduleUnscheduled(t *testing.T) {
	w := New(0)
	var a, b Timer
	a.Deadline, b.Deadline = 10, 20
	w.Deschedule(&a)
	if w.Len() != 0 || w.Scheduled(&a) {
		t.Fatal("Deschedule of a fresh node changed the wheel")
	}
	w.Schedule(&a)
	w.Schedule(&b)
	w.Deschedule(&a)
	w.Deschedule(&a)
	if w.Len() != 1 || w.Scheduled(&a) || !w.Scheduled(&b) {
		t.Fatalf("Len %d", w.Len())
	}
	checkInvariants(t, w)
	var got []*Timer
	if !w.Advance(100, 0, collect(&got)) || len(got) != 1 || got[0] != &b {
		t.Fatalf("expired %d nodes", len(got))
	}
	w.Deschedule(&b) // expired, so no longer scheduled
	if w.Len() != 0 {
		t.Fatalf("Len %d", w.Len())
	}
	checkInvariants(t, w)
}

// TestSchedulePanics checks the misuse checks of Schedule.
func TestSchedulePanics(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(w *Wheel, n *Timer)
	}{
		{"zero deadline", func(*Wheel, *Timer) {}},
		{"twice", func(w *Wheel, n *Timer) { n.Deadline = 5; w.Schedule(n) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := New(0)
			var n Timer
			tc.setup(w, &n)
			defer func() {
				if recover() == nil {
					t.Fatal("Schedule did not panic")
				}
			}()
			w.Schedule(&n)
		})
	}
}

// TestExpireCallbackChangesWheel has expire schedule and deschedule other
// nodes, including ones in the bucket being expired and ones already due.
func TestExpireCallbackChangesWheel(t *testing.T) {
	w := New(0)
	nodes := make([]Timer, 8)
	// 0..3 share a bucket and are due at 100; 4 is due at 200.
	for i := range 5 {
		nodes[i].Deadline = 100
		if i == 4 {
			nodes[i].Deadline = 200
		}
		w.Schedule(&nodes[i])
	}
	var got []*Timer
	expire := func(n *Timer) {
		got = append(got, n)
		switch n {
		case &nodes[0]:
			w.Deschedule(&nodes[1]) // same bucket, not yet visited
			w.Deschedule(&nodes[4]) // other bucket
			nodes[5].Deadline = 150 // due in this Advance
			w.Schedule(&nodes[5])
			nodes[6].Deadline = -3 // already past
			w.Schedule(&nodes[6])
			nodes[7].Deadline = 1000 // not due
			w.Schedule(&nodes[7])
		case &nodes[2]:
			if n.Deadline == 100 {
				n.Deadline = 170 // reschedule itself, due in this Advance
				w.Schedule(n)
			}
		}
	}
	for steps := 0; !w.Advance(300, 1, expire); steps++ {
		if steps > 100 {
			t.Fatal("Advance does not finish")
		}
	}
	count := map[*Timer]int{}
	for _, n := range got {
		count[n]++
	}
	want := map[*Timer]int{&nodes[0]: 1, &nodes[2]: 2, &nodes[3]: 1, &nodes[5]: 1, &nodes[6]: 1}
	for n, c := range want {
		if count[n] != c {
			t.Errorf("node %d expired %d times, want %d", n.Deadline, count[n], c)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d expirations, want 6", len(got))
	}
	if w.Len() != 1 || !w.Scheduled(&nodes[7]) {
		t.Fatalf("Len %d, want only node 7", w.Len())
	}
	checkInvariants(t, w)
}

// TestBudget checks that Advance with budget 1 visits one node per call and
// still expires everything exactly once.
func TestBudget(t *testing.T) {
	r := newRand(t, 100)
	w := New(0)
	nodes := make([]Timer, 1000)
	for i := range nodes {
		nodes[i].Deadline = 1 + r.Int64N(int64(time.Hour))
		w.Schedule(&nodes[i])
	}
	seen := map[*Timer]bool{}
	const now = int64(time.Hour)
	calls := 0
	for {
		before := w.visited
		done := w.Advance(now, 1, func(n *Timer) {
			if seen[n] {
				t.Fatal("node expired twice")
			}
			seen[n] = true
		})
		calls++
		if w.visited-before > 1 {
			t.Fatalf("visited %d nodes with budget 1", w.visited-before)
		}
		if done {
			break
		}
		if calls > len(nodes)*numLevels+1 {
			t.Fatal("too many calls")
		}
	}
	if len(seen) != len(nodes) || w.Len() != 0 {
		t.Fatalf("expired %d of %d, Len %d", len(seen), len(nodes), w.Len())
	}
	t.Logf("%d calls, %d visits for %d nodes", calls, w.visited, len(nodes))
}

// TestWorkBounded checks that Advance visits the due nodes, not the others.
func TestWorkBounded(t *testing.T) {
	r := newRand(t, 200)
	start := int64(5*time.Second) + 12345
	w := New(start)
	const far, due = 100_000, 10
	nodes := make([]Timer, far+due)
	for i := range nodes {
		if i < due {
			nodes[i].Deadline = start + 1 + r.Int64N(int64(time.Millisecond))
		} else {
			nodes[i].Deadline = start + int64(time.Hour) + r.Int64N(int64(14*24*time.Hour))
		}
		w.Schedule(&nodes[i])
	}
	expired := 0
	expire := func(*Timer) { expired++ }
	now := start + int64(time.Millisecond)
	if !w.Advance(now, 0, expire) {
		t.Fatal("Advance with no budget returned false")
	}
	if expired != due || w.Len() != far {
		t.Fatalf("expired %d, Len %d; want %d, %d", expired, w.Len(), due, far)
	}
	// Each due node is visited at most once per level (cascades) plus once
	// when it expires; the far nodes are not visited at all.
	if w.visited > due*numLevels {
		t.Fatalf("visited %d nodes to expire %d", w.visited, due)
	}
	t.Logf("Advance expired %d and visited %d of %d nodes", expired, w.visited, len(nodes))

	// Ticking on for a while without anything due visits nothing.
	for range 1000 {
		now += int64(time.Millisecond)
		w.Advance(now, 0, expire)
	}
	if expired != due || w.visited > due*numLevels {
		t.Fatalf("idle ticks: expired %d, visited %d", expired, w.visited)
	}

	// Expiring everything costs at most numLevels visits per node.
	for now < start+int64(15*24*time.Hour) {
		now += int64(time.Minute)
		if !w.Advance(now, 0, expire) {
			t.Fatal("Advance with no budget returned false")
		}
	}
	if expired != len(nodes) || w.Len() != 0 {
		t.Fatalf("expired %d of %d, Len %d", expired, len(nodes), w.Len())
	}
	if w.visited > uint64(len(nodes))*numLevels {
		t.Fatalf("%d visits for %d nodes", w.visited, len(nodes))
	}
	t.Logf("expiring %d nodes took %d visits (%.2f per node)", len(nodes), w.visited, float64(w.visited)/float64(len(nodes)))
}

// TestNoAllocs checks that Schedule, Deschedule and Advance do not allocate
// once the levels they use exist, and that an empty wheel has none.
func TestNoAllocs(t *testing.T) {
	w := New(0)
	for l := range w.buckets {
		if w.buckets[l] != nil {
			t.Fatalf("a new wheel has level %d allocated", l)
		}
	}
	nodes := make([]Timer, 64)
	now := int64(0)
	i := 0
	expire := func(*Timer) {}
	allocs := testing.AllocsPerRun(1000, func() {
		n := &nodes[i%len(nodes)]
		i++
		w.Deschedule(n)
		n.Deadline = now + int64(i%7)*int64(time.Second) + 1
		w.Schedule(n)
		now += int64(time.Millisecond)
		w.Advance(now, 0, expire)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per run", allocs)
	}
}

// BenchmarkScheduleAdvance measures a reschedule (Deschedule plus Schedule)
// of a node and an Advance of the clock by 1 µs per iteration over a wheel
// of 16k nodes whose deadlines are 1 µs to ~1 h ahead; expired nodes are
// rescheduled.
func BenchmarkScheduleAdvance(b *testing.B) {
	const size = 1 << 14
	r := rand.New(rand.NewPCG(seed, 300))
	deltas := make([]int64, 4096)
	for i := range deltas {
		deltas[i] = int64(time.Microsecond) + r.Int64N(int64(1)<<uint(10+r.IntN(32)))
	}
	w := New(0)
	nodes := make([]Timer, size)
	now := int64(0)
	for i := range nodes {
		nodes[i].Deadline = now + deltas[i%len(deltas)]
		w.Schedule(&nodes[i])
	}
	j := 0
	expire := func(n *Timer) {
		j++
		n.Deadline = now + deltas[j%len(deltas)]
		w.Schedule(n)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		n := &nodes[i%size]
		w.Deschedule(n)
		n.Deadline = now + deltas[i%len(deltas)]
		w.Schedule(n)
		now += int64(time.Microsecond)
		w.Advance(now, 0, expire)
	}
	b.ReportMetric(float64(w.visited)/float64(b.N), "visits/op")
}
