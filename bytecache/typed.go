package bytecache

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Codec encodes values of type V to bytes and back, for Typed.
//
// Append appends the encoding of v to dst and returns the extended slice:
// dst itself, grown, or a new allocation, never memory that the codec or
// its caller keeps (Typed reuses the slice for later calls).
// Decode decodes a value from b; it must not keep b (copy what it needs),
// and it must return an error, not panic, for bytes it cannot decode.
// Implementations must be safe for concurrent use.
type Codec[V any] interface {
	Append(dst []byte, v V) ([]byte, error)
	Decode(b []byte) (V, error)
}

// CodecFuncs adapts a pair of functions to a Codec.
type CodecFuncs[V any] struct {
	AppendFunc func(dst []byte, v V) ([]byte, error)
	DecodeFunc func(b []byte) (V, error)
}

func (f CodecFuncs[V]) check() {
	if f.AppendFunc == nil || f.DecodeFunc == nil {
		panic("bytecache: NewTyped with a CodecFuncs lacking AppendFunc or DecodeFunc")
	}
}

// Append calls f.AppendFunc.
func (f CodecFuncs[V]) Append(dst []byte, v V) ([]byte, error) { return f.AppendFunc(dst, v) }

// Decode calls f.DecodeFunc.
func (f CodecFuncs[V]) Decode(b []byte) (V, error) { return f.DecodeFunc(b) }

// BytesCodec stores []byte values as they are; Decode returns a copy (a
// nil slice for an empty value).
type BytesCodec struct{}

// Append appends v to dst.
func (BytesCodec) Append(dst []byte, v []byte) ([]byte, error) { return append(dst, v...), nil }

// Decode returns a copy of b.
func (BytesCodec) Decode(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return append([]byte(nil), b...), nil
}

// StringCodec stores string values as their bytes.
type StringCodec struct{}

// Append appends v to dst.
func (StringCodec) Append(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil }

// Decode returns b as a string.
func (StringCodec) Decode(b []byte) (string, error) { return string(b), nil }

// Typed is a typed view of a Cache: keys of type K (a string or byte slice
// type) and values of type V stored in their encoding by a Codec, so that
// values live in the cache's chunks rather than as objects on the heap.
// Several Typed views, with different codecs, may share one Cache if their
// keys do not overlap.
//
// Every method is safe for concurrent use.
type Typed[K ~string | ~[]byte, V any] struct {
	c        *Cache
	codec    Codec[V]
	isString bool
	bufs     sync.Pool // *[]byte
	decErrs  atomic.Uint64
}

// NewTyped returns a typed view of c that encodes values with codec. It
// panics if c or codec is nil (a nil pointer in the interface included),
// or if codec is a CodecFuncs lacking one of its functions.
func NewTyped[K ~string | ~[]byte, V any](c *Cache, codec Codec[V]) *Typed[K, V] {
	if c == nil {
		panic("bytecache: NewTyped with a nil Cache")
	}
	switch cf := codec.(type) {
	case nil:
		panic("bytecache: NewTyped with a nil Codec")
	case *CodecFuncs[V]:
		if cf == nil {
			panic("bytecache: NewTyped with a nil *CodecFuncs")
		}
		cf.check()
	case CodecFuncs[V]:
		cf.check()
	default:
		// A nil *StringCodec, say: its methods would panic at the first
		// Set or Get instead.
		if v := reflect.ValueOf(codec); v.Kind() == reflect.Pointer && v.IsNil() {
			panic(fmt.Sprintf("bytecache: NewTyped with a nil %T", codec))
		}
	}
	return &Typed[K, V]{
		c:        c,
		codec:    codec,
		isString: reflect.TypeFor[K]().Kind() == reflect.String,
	}
}

// Cache returns the underlying cache.
func (t *Typed[K, V]) Cache() *Cache { return t.c }

// DecodeErrors returns how many values Get failed to decode (each a miss,
// counted as one in the cache's Stats).
func (t *Typed[K, V]) DecodeErrors() uint64 { return t.decErrs.Load() }

// keyBytes returns the bytes of key without copying them. The cache never
// writes to a key it is given, so viewing a string's bytes is safe.
func (t *Typed[K, V]) keyBytes(key *K) []byte {
	if t.isString {
		s := *(*string)(unsafe.Pointer(key))
		return unsafe.Slice(unsafe.StringData(s), len(s))
	}
	return *(*[]byte)(unsafe.Pointer(key))
}

// maxPooled is the largest buffer Typed keeps for reuse.
const maxPooled = 64 << 10

func (t *Typed[K, V]) buf() *[]byte {
	if b, ok := t.bufs.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

func (t *Typed[K, V]) put(b *[]byte) {
	if cap(*b) <= maxPooled {
		t.bufs.Put(b)
	}
}

// Get returns the value stored for key, decoded. A value that fails to
// decode counts in DecodeErrors and is reported (and counted in Stats) as
// a miss.
func (t *Typed[K, V]) Get(key K) (V, bool) {
	b := t.buf()
	defer t.put(b)
	var ok bool
	var sh *shard
	*b, sh, ok = t.c.get((*b)[:0], t.keyBytes(&key))
	if !ok {
		var zero V
		return zero, false
	}
	v, err := t.codec.Decode(*b)
	if err != nil {
		t.decErrs.Add(1)
		sh.misses.Add(1)
		var zero V
		return zero, false
	}
	sh.hits.Add(1)
	return v, true
}

// Set encodes v and stores it for key, as Cache.Set. An encoding error is
// returned wrapped, and nothing is stored. After Close it returns ErrClosed
// without encoding v, as Cache.Set does whatever it is given.
func (t *Typed[K, V]) Set(key K, v V, ttl time.Duration) error {
	if t.c.closed.Load() {
		return ErrClosed
	}
	b := t.buf()
	defer t.put(b)
	var err error
	if *b, err = t.codec.Append((*b)[:0], v); err != nil {
		return fmt.Errorf("bytecache: encoding value: %w", err)
	}
	return t.c.Set(t.keyBytes(&key), *b, ttl)
}

// Has reports whether key has an unexpired entry, as Cache.Has.
func (t *Typed[K, V]) Has(key K) bool { return t.c.Has(t.keyBytes(&key)) }

// Delete removes key's entry, as Cache.Delete.
func (t *Typed[K, V]) Delete(key K) bool { return t.c.Delete(t.keyBytes(&key)) }
