package cachekit

import "reflect"

// keyKind says how a cache hashes its keys. maphash.Comparable hashes any
// comparable key, through the runtime's hash function for the type (a type
// lookup and an indirect call); keys that are 8-byte integers or strings,
// the most common, take a direct path instead.
type keyKind uint8

const (
	keyOther  keyKind = iota // maphash.Comparable
	keyInt64                 // an 8-byte integer kind: mix.Mix of the bits xor a seed
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
