package hitratio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
)

// The synthetic suite: traces generated in the process, for an
// out-of-sample check. The default policy was tuned on the traces
// README's suite; these five, made afterwards with common shapes of
// traffic in mind (a mild and a steep power law, a popularity that moves,
// scans, a loop larger than the cache mixed with skewed traffic), show
// how it does on traffic it was not tuned on. Every trace is fixed by its
// generator and seed, so no file is needed.
var synthetic = []TraceSpec{
	{"synthetic-zipf-0.7", FamilySkew, "Synthetic: 2,000,000 requests over 1,048,576 keys, p(rank i) ∝ 1/i^0.7 (a mild skew)", []int{10000, 100000}},
	{"synthetic-zipf-1.2", FamilySkew, "Synthetic: 2,000,000 requests, Go's rand.Zipf with s = 1.2 over 1,048,576 keys (a steep skew)", []int{1000, 10000}},
	{"synthetic-shift", FamilyRecency, "Synthetic: 2,000,000 requests, p(rank i) ∝ 1/i^0.9 over 100,000 keys, the whole key set replaced by a new one every 200,000 requests (popularity that moves)", []int{1000, 10000}},
	{"synthetic-scan", FamilyLoop, "Synthetic: 2,000,000 requests, p(rank i) ∝ 1/i^0.9 over 200,000 keys, and after every 300,000 a scan of 50,000 keys never requested before", []int{5000, 20000}},
	{"synthetic-loop", FamilyLoop, "Synthetic: 1,000,000 requests, p(rank i) ∝ 1/i^0.9 over 100,000 keys, interleaved one for one with a loop over 12,000 other keys", []int{5000, 15000}},
}

// SyntheticSuite returns the synthetic traces and their capacities.
func SyntheticSuite() []TraceSpec { return cloneSpecs(synthetic) }

// SyntheticLoad is a Config.Load for the synthetic suite: it generates the
// trace that path names (its file name, as TraceSpec.File gives it; the
// directory is ignored).
func SyntheticLoad(path string) ([]uint64, error) {
	return SyntheticKeys(strings.TrimSuffix(filepath.Base(path), ".txt.gz"))
}

// SyntheticKeys generates the synthetic trace name. The same name always
// gives the same keys.
func SyntheticKeys(name string) ([]uint64, error) {
	switch name {
	case "synthetic-zipf-0.7":
		r := rand.New(rand.NewPCG(1, 7))
		return newPowerLaw(0.7, 1<<20).keys(r, 2_000_000), nil
	case "synthetic-zipf-1.2":
		r := rand.New(rand.NewPCG(1, 12))
		z := rand.NewZipf(r, 1.2, 1, 1<<20-1)
		keys := make([]uint64, 2_000_000)
		for i := range keys {
			keys[i] = z.Uint64()
		}
		return keys, nil
	case "synthetic-shift":
		r := rand.New(rand.NewPCG(2, 9))
		keys := newPowerLaw(0.9, 100_000).keys(r, 2_000_000)
		for i := range keys {
			keys[i] += uint64(i/200_000) * 1_000_003 // a new key set per phase
		}
		return keys, nil
	case "synthetic-scan":
		r := rand.New(rand.NewPCG(3, 9))
		hot := newPowerLaw(0.9, 200_000).keys(r, 2_000_000)
		keys := make([]uint64, 0, len(hot)+6*50_000)
		next := uint64(1 << 40) // scanned keys: never requested otherwise
		for i, k := range hot {
			keys = append(keys, k)
			if i%300_000 == 299_999 {
				for range 50_000 {
					keys = append(keys, next)
					next++
				}
			}
		}
		return keys, nil
	case "synthetic-loop":
		r := rand.New(rand.NewPCG(4, 9))
		hot := newPowerLaw(0.9, 100_000).keys(r, 500_000)
		keys := make([]uint64, 0, 2*len(hot))
		for i, k := range hot {
			keys = append(keys, k, 1<<41+uint64(i%12_000))
		}
		return keys, nil
	}
	return nil, fmt.Errorf("no synthetic trace %q", name)
}

// powerLaw draws ranks 0..n-1 with probability proportional to
// 1/(rank+1)^alpha, by inverting the cumulative distribution (any alpha,
// where Go's rand.Zipf needs more than 1).
type powerLaw struct{ cdf []float64 }

func newPowerLaw(alpha float64, n int) powerLaw {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += math.Pow(float64(i+1), -alpha)
		cdf[i] = sum
	}
	return powerLaw{cdf}
}

func (p powerLaw) keys(r *rand.Rand, n int) []uint64 {
	total := p.cdf[len(p.cdf)-1]
	out := make([]uint64, n)
	for i := range out {
		u := r.Float64() * total
		out[i] = uint64(sort.SearchFloat64s(p.cdf, u))
	}
	return out
}
