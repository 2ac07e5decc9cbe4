package histogram

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestIndexIsMonotoneAndLowerBounds(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 20, 1<<20 + 12345, 1 << 40, 1<<63 - 1, 1 << 63, 1<<64 - 1} {
		i := index(v)
		if i < prev || i >= buckets {
			t.Fatalf("index(%d) = %d after %d", v, i, prev)
		}
		prev = i
		lo := lower(i)
		if lo > v {
			t.Errorf("lower(index(%d)) = %d, above the value", v, lo)
		}
		if v >= sub && float64(v-lo) > float64(v)/sub {
			t.Errorf("bucket of %d starts at %d: more than 1/%d below", v, lo, sub)
		}
		if i+1 < buckets && lower(i+1) <= v {
			t.Errorf("value %d belongs to bucket %d, not %d", v, i+1, i)
		}
	}
}

func TestQuantiles(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	var h Histogram
	var all []time.Duration
	for range 100_000 {
		d := time.Duration(r.ExpFloat64() * float64(50*time.Microsecond))
		h.Record(d)
		all = append(all, d)
	}
	slices.Sort(all)
	if h.Count() != uint64(len(all)) || h.Max() != all[len(all)-1] {
		t.Fatalf("count %d, max %v; want %d, %v", h.Count(), h.Max(), len(all), all[len(all)-1])
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := all[int(q*float64(len(all)))-1]
		got := h.Quantile(q)
		if got > want || float64(want-got) > float64(want)/sub+1 {
			t.Errorf("q%.3f = %v, want within 1/%d below %v", q, got, sub, want)
		}
	}
	if h.Quantile(1) != h.Max() {
		t.Errorf("q1 = %v, want the max %v", h.Quantile(1), h.Max())
	}
}

func TestMergeAndEmpty(t *testing.T) {
	var a, b Histogram
	if a.Quantile(0.5) != 0 || a.Count() != 0 {
		t.Error("an empty histogram has a median")
	}
	for i := range 100 {
		a.Record(time.Duration(i))
		b.Record(time.Duration(1000 + i))
	}
	b.Record(-5)
	a.Merge(&b)
	if a.Count() != 201 || a.Max() != 1099 {
		t.Errorf("merged count %d, max %v", a.Count(), a.Max())
	}
	if got := a.Quantile(0.25); got > 50 {
		t.Errorf("q0.25 of the merge = %v", got)
	}
	if got := a.Quantile(0.99); got < 1000 {
		t.Errorf("q0.99 of the merge = %v", got)
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	var h Histogram
	if n := testing.AllocsPerRun(100, func() { h.Record(123 * time.Microsecond) }); n != 0 {
		t.Errorf("Record allocates %v times", n)
	}
}
