package workload

import (
	"math"
	"math/rand/v2"
)

// scrambledZipf draws keys the way YCSB's ScrambledZipfianGenerator does,
// which Caffeine's GetPutBenchmark (and otter's and theine's copies of it)
// use to fill their key arrays:
//
//  1. draw a rank r from a Zipf distribution with exponent θ over
//     zipfItems (10¹⁰) ranks, with Gray et al.'s closed-form
//     approximation ("Quickly generating billion-record synthetic
//     databases", SIGMOD 1994), where rank 0 is the most popular;
//  2. hash r with 64-bit FNV-1a over its 8 bytes, take the absolute value,
//     and reduce it modulo the number of keys wanted.
//
// The huge rank space and the hash spread the popular ranks over the small
// key space in a pseudo-random order, so hot keys are not neighbours.
type scrambledZipf struct {
	r     *rand.Rand
	items uint64 // the size of the key space
	theta float64
	n     float64 // the number of ranks
	zetan float64
	alpha float64
	eta   float64
	half  float64 // 1 + 0.5^θ: the bound of rank 1
}

// zipfItems is the number of ranks of the underlying Zipf distribution, as
// in YCSB.
const zipfItems = 10_000_000_000

func newScrambledZipf(r *rand.Rand, items uint64, theta float64) *scrambledZipf {
	n := float64(zipfItems)
	zetan := zeta(zipfItems, theta)
	zeta2 := 1 + math.Pow(2, -theta)
	return &scrambledZipf{
		r:     r,
		items: items,
		theta: theta,
		n:     n,
		zetan: zetan,
		alpha: 1 / (1 - theta),
		eta:   (1 - math.Pow(2/n, 1-theta)) / (1 - zeta2/zetan),
		half:  1 + math.Pow(0.5, theta),
	}
}

// rank draws a Zipf rank in [0, zipfItems).
func (z *scrambledZipf) rank() uint64 {
	u := z.r.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	r := uint64(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(r, zipfItems-1)
}

// next draws a key in [0, items).
func (z *scrambledZipf) next() uint64 {
	h := fnv1a64(z.rank())
	if int64(h) < 0 {
		h = -h // YCSB takes Math.abs of the signed hash
	}
	return h % z.items
}

// fnv1a64 hashes v's 8 bytes, least significant first, with 64-bit FNV-1a.
func fnv1a64(v uint64) uint64 {
	h := uint64(0xcbf29ce484222325)
	for range 8 {
		h ^= v & 0xff
		h *= 0x100000001b3
		v >>= 8
	}
	return h
}

// zeta returns Σ_{i=1..n} i^-θ for θ in (0, 1): the first terms exactly,
// the tail by the Euler–Maclaurin formula (its error is far below the
// float64 resolution for these n). For n = 10¹⁰ and θ = 0.99 it gives
// 26.469028..., YCSB's precomputed constant.
func zeta(n uint64, theta float64) float64 {
	const head = 1000
	sum := 0.0
	for i := uint64(1); i <= min(n, head); i++ {
		sum += math.Pow(float64(i), -theta)
	}
	if n <= head {
		return sum
	}
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	df := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	a, b := float64(head), float64(n)
	integral := (math.Pow(b, 1-theta) - math.Pow(a, 1-theta)) / (1 - theta)
	// Σ_{i=a+1..b} f(i) ≈ ∫_a^b f + (f(b) - f(a))/2 + (f'(b) - f'(a))/12.
	return sum + integral + (f(b)-f(a))/2 + (df(b)-df(a))/12
}

// mix64 is a bijection of uint64 (the finaliser of SplitMix64): it turns
// ranks 0, 1, 2, ... into keys that look random, so no cache benefits or
// suffers from popular keys being small, neighbouring integers.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
