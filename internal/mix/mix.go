// Package mix is a bijective 64-bit mixer (the finaliser of MurmurHash3)
// and its inverse, shared by the cache's integer-key hash, the simulator
// and the policy tests: every input bit affects every output bit, so
// sequential keys become well spread hashes, and Unmix recovers a key from
// its hash.
package mix

// Mix returns the MurmurHash3 finaliser of x.
func Mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

var (
	inv1 = inverse(0xff51afd7ed558ccd)
	inv2 = inverse(0xc4ceb9fe1a85ec53)
)

// Unmix inverts Mix: x ^= x>>33 is its own inverse, and the odd
// multipliers have inverses modulo 2⁶⁴.
func Unmix(x uint64) uint64 {
	x ^= x >> 33
	x *= inv2
	x ^= x >> 33
	x *= inv1
	x ^= x >> 33
	return x
}

// inverse returns the multiplicative inverse of the odd a modulo 2⁶⁴
// (Newton's iteration doubles the correct low bits each step).
func inverse(a uint64) uint64 {
	x := a // correct to 3 bits for odd a
	for range 5 {
		x *= 2 - a*x
	}
	return x
}
