package workload

import (
	"math"
	"math/bits"
	"slices"
	"testing"
)

func TestZeta(t *testing.T) {
	// YCSB's precomputed ζ(10¹⁰, 0.99).
	if got, want := zeta(zipfItems, 0.99), 26.46902820178302; math.Abs(got-want) > 1e-9 {
		t.Errorf("zeta(1e10, 0.99) = %.15f, want %.15f", got, want)
	}
	for _, n := range []uint64{1, 10, 1000, 1001, 5000, 123_457} {
		want := 0.0
		for i := uint64(1); i <= n; i++ {
			want += math.Pow(float64(i), -0.99)
		}
		if got := zeta(n, 0.99); math.Abs(got-want) > 1e-9*want {
			t.Errorf("zeta(%d, 0.99) = %.12f, want %.12f", n, got, want)
		}
	}
}

func TestMix64IsABijectionOnASample(t *testing.T) {
	seen := map[uint64]bool{}
	for i := range uint64(1 << 16) {
		k := mix64(i)
		if seen[k] {
			t.Fatalf("mix64 maps two ranks to %#x", k)
		}
		seen[k] = true
	}
}

func TestGetPut(t *testing.T) {
	w := GetPut()
	if len(w.Keys) != GetPutSize || w.Capacity != GetPutSize || w.KeySpace != GetPutItems || GetPutItems != 10922 {
		t.Fatalf("GetPut: %d keys, capacity %d, key space %d", len(w.Keys), w.Capacity, w.KeySpace)
	}
	if !slices.Equal(w.Keys, GetPut().Keys) {
		t.Fatal("GetPut is not deterministic")
	}
	counts := map[uint64]int{}
	for _, k := range w.Keys {
		if k >= GetPutItems {
			t.Fatalf("key %d is outside [0, %d)", k, GetPutItems)
		}
		counts[k]++
	}
	// With 32,768 draws over 10,922 keys the array holds most keys but not
	// all (the figure is in the reports).
	if d := w.Distinct(); d != len(counts) || d < 9000 || d > GetPutItems {
		t.Errorf("GetPut has %d distinct keys, want between 9000 and %d", d, GetPutItems)
	}
	t.Logf("GetPut: %d distinct keys", len(counts))
	// Zipf with θ = 0.99 over 10¹⁰ ranks gives rank 0 a share of 1/ζ ≈ 3.8%:
	// the hottest key (rank 0 plus the few ranks hashed with it) stands out.
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	t.Logf("GetPut: the hottest key has %.2f%% of the array", 100*float64(top)/GetPutSize)
	if share := float64(top) / GetPutSize; share < 0.03 || share > 0.06 {
		t.Errorf("the hottest key has %.1f%% of the array, want about 3.8%%", 100*share)
	}
	if !slices.Equal(w.PrefillKeys, w.Keys) || w.SetOnMiss || !slices.Equal(w.ReadPcts, []int{100, 75, 50, 25, 0}) {
		t.Errorf("GetPut: prefill, set-on-miss or mixes differ from the specification")
	}
}

// GetPutWarm is GetPut on a cache its keys fill past half (reads are
// recorded) but not to the brim (nothing is evicted).
func TestGetPutWarm(t *testing.T) {
	w, g := GetPutWarm(), GetPut()
	if !slices.Equal(w.Keys, g.Keys) || !slices.Equal(w.PrefillKeys, g.PrefillKeys) || !slices.Equal(w.ReadPcts, g.ReadPcts) {
		t.Fatal("GetPutWarm's keys, pre-fill or mixes differ from GetPut's")
	}
	if d := w.Distinct(); 2*d <= w.Capacity || d > w.Capacity {
		t.Errorf("GetPutWarm: %d distinct keys in a capacity of %d, want more than half and at most all", d, w.Capacity)
	}
}

func TestEvict(t *testing.T) {
	const capacity = 1000
	for _, dist := range []Distribution{Zipf, Uniform} {
		t.Run(string(dist), func(t *testing.T) {
			w, err := Evict(dist, capacity)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Evict(dist, capacity)
			if !slices.Equal(w.Keys, again.Keys) {
				t.Fatal("not deterministic")
			}
			if n := len(w.Keys); n != 1<<16 || bits.OnesCount(uint(n)) != 1 {
				t.Errorf("stream length %d, want 65536 (40 × capacity rounded up to a power of two)", n)
			}
			if w.KeySpace != 10*capacity || w.Capacity != capacity || !w.SetOnMiss {
				t.Errorf("key space %d, capacity %d, set on miss %v", w.KeySpace, w.Capacity, w.SetOnMiss)
			}
			// The pre-fill fills the caches: 2× capacity distinct keys
			// (and the repeats drawn on the way to them, for the skew).
			distinct := map[uint64]bool{}
			for _, k := range w.PrefillKeys {
				distinct[k] = true
			}
			if len(distinct) != 2*capacity || len(w.PrefillKeys) < 2*capacity {
				t.Errorf("pre-fill of %d keys, %d distinct; want 2× capacity (%d) distinct", len(w.PrefillKeys), len(distinct), 2*capacity)
			}
			// Every key is the image of a rank in the key space.
			ranks := map[uint64]bool{}
			for r := range uint64(w.KeySpace) {
				ranks[mix64(r)] = true
			}
			counts := map[uint64]int{}
			for _, k := range w.Keys {
				if !ranks[k] {
					t.Fatalf("key %#x is not in the key space", k)
				}
				counts[k]++
			}
			d := w.Distinct()
			t.Logf("%s: %d distinct keys of %d", dist, d, w.KeySpace)
			top := 0
			for _, n := range counts {
				top = max(top, n)
			}
			switch dist {
			case Uniform:
				// 65,536 draws over 10,000 keys miss about e^-6.5 of them.
				if d < 9900 {
					t.Errorf("%d distinct keys, want nearly all of %d", d, w.KeySpace)
				}
				if top > 30 {
					t.Errorf("the hottest key is drawn %d times, too many for a uniform stream", top)
				}
			case Zipf:
				// Far more distinct keys than the capacity, so caches keep
				// evicting, and a hot head: rank 0 has about 1/ζ(1.01) of
				// the draws (about 10% over 10,000 keys).
				if d < 3*capacity || d > w.KeySpace {
					t.Errorf("%d distinct keys, want between %d and %d", d, 3*capacity, w.KeySpace)
				}
				if share := float64(top) / float64(len(w.Keys)); share < 0.07 || share > 0.14 {
					t.Errorf("the hottest key has %.1f%% of the stream, want about 10%%", 100*share)
				}
			}
		})
	}
	if _, err := Evict("nope", capacity); err == nil {
		t.Error("Evict accepted an unknown distribution")
	}
	if _, err := Evict(Zipf, 3); err == nil {
		t.Error("Evict accepted a tiny capacity")
	}
}

func TestByName(t *testing.T) {
	for _, name := range Names {
		w, err := ByName(name, 1000)
		if err != nil || w.Name != name {
			t.Errorf("ByName(%q) = %v, %v", name, w, err)
		}
	}
	if _, err := ByName("nope", 1000); err == nil {
		t.Error("ByName accepted an unknown name")
	}
}

func TestWorkers(t *testing.T) {
	w := GetPut()
	for _, pct := range []int{0, 25, 50, 75, 90, 100} {
		ws := w.Workers(pct, 4, 7)
		again := w.Workers(pct, 4, 7)
		want := (opsLen*pct + 50) / 100
		offsets := map[uint64]bool{}
		for i, wk := range ws {
			reads := 0
			for _, word := range wk.reads {
				reads += bits.OnesCount64(word)
			}
			if reads != want {
				t.Errorf("%d%%: worker %d has %d reads of %d, want %d", pct, i, reads, opsLen, want)
			}
			if wk.pos != again[i].pos || !slices.Equal(wk.reads, again[i].reads) {
				t.Errorf("%d%%: worker %d differs for the same seed", pct, i)
			}
			offsets[wk.pos] = true
		}
		if len(offsets) != len(ws) {
			t.Errorf("%d%%: workers share offsets", pct)
		}
		// Evenly spread: each worker starts a quarter of the array after
		// the previous one.
		for i := 1; i < len(ws); i++ {
			if d := (ws[i].pos - ws[i-1].pos) & ws[i].mask; d != GetPutSize/4 {
				t.Errorf("%d%%: worker %d starts %d after worker %d, want %d", pct, i, d, i-1, GetPutSize/4)
			}
		}
		if pct > 0 && pct < 100 && slices.Equal(ws[0].reads, ws[1].reads) {
			t.Errorf("%d%%: two workers have the same operation stream", pct)
		}
	}
	if slices.Equal(w.Workers(50, 1, 1)[0].reads, w.Workers(50, 1, 2)[0].reads) {
		t.Error("different seeds give the same operation stream")
	}
}

// fake is a map that counts calls; single goroutine only.
type fake struct {
	m          map[uint64]uint64
	gets, sets int
}

func (f *fake) Name() string { return "fake" }
func (f *fake) Get(k uint64) (uint64, bool) {
	f.gets++
	v, ok := f.m[k]
	return v, ok
}
func (f *fake) Set(k, v uint64) { f.sets++; f.m[k] = v }
func (f *fake) Close()          {}

func TestWorkerRun(t *testing.T) {
	getput := GetPut()
	evict, err := Evict(Zipf, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		w   *Workload
		pct int
	}{{getput, 100}, {getput, 75}, {getput, 0}, {evict, 100}, {evict, 50}} {
		f := &fake{m: map[uint64]uint64{}}
		tc.w.Prefill(f)
		if f.sets != len(tc.w.PrefillKeys) {
			t.Fatalf("%s: prefill made %d Sets, want %d", tc.w.Name, f.sets, len(tc.w.PrefillKeys))
		}
		f.gets, f.sets = 0, 0
		wk := tc.w.Workers(tc.pct, 1, 3)[0]
		const n = 2 * opsLen // whole periods of the operation stream
		wk.Run(f, n/2)
		i := 0
		wk.RunWhile(f, func() bool { i++; return i <= n/2 })
		reads := 2 * ((opsLen*tc.pct + 50) / 100)
		if wk.Ops != n || wk.Gets != uint64(reads) || f.gets != reads {
			t.Errorf("%s %d%%: %d ops, %d gets (cache saw %d), want %d and %d", tc.w.Name, tc.pct, wk.Ops, wk.Gets, f.gets, n, reads)
		}
		misses := int(wk.Gets - wk.Hits)
		wantSets := n - reads
		if tc.w.SetOnMiss {
			wantSets += misses
		}
		if f.sets != wantSets {
			t.Errorf("%s %d%%: %d Sets, want %d", tc.w.Name, tc.pct, f.sets, wantSets)
		}
		if tc.w == getput && wk.Hits != wk.Gets {
			t.Errorf("getput: %d of %d Gets missed a pre-filled map", wk.Gets-wk.Hits, wk.Gets)
		}
	}
}
