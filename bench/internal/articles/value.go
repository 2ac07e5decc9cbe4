// Package articles measures the comparison table of the article
// "Implementing robust in-memory cache with Go"
// (../shared/seeds/robust-in-memory-cache-with-go.txt) for cachekit and
// every peer in one run: 1M entries of struct{int; bool; string}, the
// memory they occupy after a garbage collection, and the time per
// operation of goroutines reading and writing them in parallel at 10% and
// 0.1% writes. The byte caches store the struct binary-encoded (Codec).
//
// Every cache is measured in a fresh process (package subproc), so that
// its memory figure is its own; rounds are interleaved and the tables
// show medians.
package articles

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Value is the article's entry: struct{int; bool; string}.
type Value struct {
	N int
	B bool
	S string
}

// Key returns the i-th key: "user:" and i in decimal.
func Key(i int) string { return "user:" + strconv.Itoa(i) }

// NewValue returns the i-th value. Its string is built afresh, so a cache
// holding the value holds its string too.
func NewValue(i int) Value {
	return Value{N: i, B: i%2 == 0, S: "profile-" + strconv.Itoa(i*7919)}
}

// Codec encodes a Value as a varint, a byte and a length-prefixed string:
// the "binary de/encoder" the byte caches need.
type Codec struct{}

// Append appends v's encoding to dst.
func (Codec) Append(dst []byte, v Value) ([]byte, error) {
	dst = binary.AppendVarint(dst, int64(v.N))
	b := byte(0)
	if v.B {
		b = 1
	}
	dst = append(dst, b)
	dst = binary.AppendUvarint(dst, uint64(len(v.S)))
	return append(dst, v.S...), nil
}

// ErrCorrupt is returned by Decode for bytes that Append did not write.
var ErrCorrupt = errors.New("articles: corrupt value encoding")

// Decode decodes a Value; its string is a copy of b's bytes.
func (Codec) Decode(b []byte) (Value, error) {
	n, k := binary.Varint(b)
	if k <= 0 || k >= len(b) {
		return Value{}, ErrCorrupt
	}
	b = b[k:]
	if b[0] > 1 {
		return Value{}, ErrCorrupt
	}
	v := Value{N: int(n), B: b[0] == 1}
	l, k := binary.Uvarint(b[1:])
	if k <= 0 || uint64(len(b)-1-k) != l {
		return Value{}, ErrCorrupt
	}
	v.S = string(b[1+k:])
	return v, nil
}

// EntryBytes returns the size of the i-th key plus its encoded value.
func EntryBytes(i int) int {
	b, _ := Codec{}.Append(nil, NewValue(i))
	return len(Key(i)) + len(b)
}
