package redis

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"
)

// Codec turns values into bytes for Redis and back. Implementations must be
// safe for concurrent use. Decode gets bytes that it may keep (they are not
// reused); it must return an error, not panic, for bytes it cannot decode
// (a panic is recovered and counted as an error all the same).
type Codec[V any] interface {
	// Name identifies the encoding; it is part of the fingerprint stored
	// with each value, so that a value encoded by another codec is a miss.
	Name() string
	// Append appends v's encoding to dst and returns the extended slice
	// (as append does: dst's contents first). A result that does not
	// start with dst's contents (a fresh slice, say json.Marshal's) is an
	// error of Set, and of the write of a loaded value.
	Append(dst []byte, v V) ([]byte, error)
	// Decode decodes a value that Append encoded.
	Decode(data []byte) (V, error)
}

// DefaultCodec returns the codec a Cache uses when Options.Codec is nil:
// the bytes as they are for []byte and string values, JSON (encoding/json)
// for every other type.
func DefaultCodec[V any]() Codec[V] {
	switch any((*V)(nil)).(type) {
	case *[]byte:
		return any(BytesCodec{}).(Codec[V])
	case *string:
		return any(StringCodec{}).(Codec[V])
	}
	return JSONCodec[V]{}
}

// BytesCodec stores []byte values as they are.
type BytesCodec struct{}

func (BytesCodec) Name() string                                { return "bytes" }
func (BytesCodec) Append(dst []byte, v []byte) ([]byte, error) { return append(dst, v...), nil }
func (BytesCodec) Decode(data []byte) ([]byte, error)          { return data, nil }

// StringCodec stores string values as they are.
type StringCodec struct{}

func (StringCodec) Name() string                                { return "string" }
func (StringCodec) Append(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }
func (StringCodec) Decode(data []byte) (string, error)          { return string(data), nil }

// JSONCodec encodes values with encoding/json.
type JSONCodec[V any] struct{}

func (JSONCodec[V]) Name() string { return "json" }

func (JSONCodec[V]) Append(dst []byte, v V) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

func (JSONCodec[V]) Decode(data []byte) (V, error) {
	var v V
	err := json.Unmarshal(data, &v)
	return v, err
}

// fingerprint identifies V's shape, the codec and the version: values
// stored under another fingerprint are treated as misses. It hashes the
// type's structure (kinds, names, struct fields with their tags and
// whether they are embedded, recursively), not just its name, so that a
// field added, removed, renamed, retyped or embedded changes it.
func fingerprint[V any](codec Codec[V], version string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "codec=%s;version=%s;", codec.Name(), version)
	describe(h, reflect.TypeFor[V](), map[reflect.Type]int{})
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1 // 0 marks tombstones
}

type writer interface{ Write([]byte) (int, error) }

func describe(w writer, t reflect.Type, seen map[reflect.Type]int) {
	put := func(s string) { _, _ = w.Write([]byte(s)) }
	put(t.Kind().String())
	if t.Name() != "" {
		put("(" + t.PkgPath() + "." + t.Name() + ")")
	}
	switch n := seen[t]; {
	case n < 0: // on the current path: a cycle
		put("^")
		return
	case n > 0: // described in full already: refer to that description
		put("#" + strconv.Itoa(n))
		return
	}
	seen[t] = -1
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		put("[")
		describe(w, t.Elem(), seen)
		put("]")
	case reflect.Array:
		put("[" + strconv.Itoa(t.Len()))
		describe(w, t.Elem(), seen)
		put("]")
	case reflect.Map:
		put("[")
		describe(w, t.Key(), seen)
		put("]")
		describe(w, t.Elem(), seen)
	case reflect.Struct:
		put("{")
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous { // embedded: its fields are the outer struct's in JSON
				put("embedded ")
			}
			put(f.Name + " " + strconv.Quote(string(f.Tag)) + " ")
			describe(w, f.Type, seen)
			put(";")
		}
		put("}")
	}
	seen[nil]++ // the nil key counts the types described in full
	seen[t] = seen[nil]
}
