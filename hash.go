package cachekit

import (
	"reflect"
)

// keyKind says how a cache hashes its keys. maphash.Comparable hashes any
// comparable key, through the runtime's hash function for the type (a type
// lookup and an indirect call); keys that are 8-byte integers or strings,
// the most common, take a direct path instead.
type keyKind uint8

const (
	keyOther  keyKind = iota // maphash.Comparable
	keyInt64                 // an 8-byte integer kind: mix64 of the bits and a seed
	keyString                // a string kind: maphash.String
)

// kindOfKey returns the keyKind for keys of type K.
func kindOfKey[K comparable]() keyKind {
	switch reflect.TypeFor[K]().Kind() {
	case reflect.Int64, reflect.Uint64:
		return keyInt64
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		if reflect.TypeFor[K]().Size() == 8 {
			return keyInt64
		}
	case reflect.String:
		return keyString
	}
	return keyOther
}

// mix64 is a bijective 64-bit mixer (the finaliser of MurmurHash3): every
// input bit affects every output bit. Applied to a key xor a random
// per-cache seed, it spreads sequential and patterned integer keys over
// the index as a random hash would, and without the seed an outsider
// cannot tell which keys collide.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
