package cachekit

import (
	"reflect"
	"sync/atomic"
	"unsafe"
)

// How an entry holds its value. A value that fits in one machine word can
// be replaced in place with an atomic store, so that a Set of an existing
// key allocates nothing and needs no policy bookkeeping beyond an access;
// any other value is immutable once published and a Set swaps in a new
// entry.
const (
	valueInline = iota // in entry.value, never written after publication
	valueBits          // pointer-free, at most 8 bytes: the 8-byte word at entry.value, atomically
	valuePtr           // one pointer word (pointer, map, chan, func): in entry.value, atomically
)

// valueKind returns how entries of a cache of V hold their values.
func valueKind[V any]() int {
	t := reflect.TypeFor[V]()
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return valuePtr
	}
	if t.Size() <= 8 && pointerFree(t) {
		return valueBits
	}
	return valueInline
}

// pointerFree reports whether values of t hold no pointers.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64:
		return true
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// bits returns the aligned word that holds a valueBits value: the value's
// own bytes and, if it is shorter, the padding that follows it to the end
// of the word (entry.value is the entry's last field and starts on an
// 8-byte boundary, so the word is inside the entry). The padding is always
// zero: only whole words built from a zeroed uint64 are stored there.
func bits[K comparable, V any](e *entry[K, V]) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&e.value))
}

// load returns e's current value. Lock-free.
func (c *cache[K, V]) load(e *entry[K, V]) V { return loadValue(c.vkind, e) }

// loadValue returns e's current value, held as vkind says. Lock-free.
func loadValue[K comparable, V any](vkind int, e *entry[K, V]) V {
	switch vkind {
	case valueBits:
		u := bits(e).Load()
		return *(*V)(unsafe.Pointer(&u))
	case valuePtr:
		p := atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&e.value)))
		return *(*V)(unsafe.Pointer(&p))
	}
	return e.value
}

// init stores v in e before e is published. A plain store: the atomic
// store that publishes e orders it before every reader's atomic load.
func (c *cache[K, V]) init(e *entry[K, V], v V) {
	if c.vkind == valueBits {
		var u uint64
		*(*V)(unsafe.Pointer(&u)) = v
		*(*uint64)(unsafe.Pointer(&e.value)) = u
		return
	}
	e.value = v
}

// swap replaces the value of the published entry e with v and returns the
// previous one. Only for vkind != valueInline; the caller holds e's segment
// lock, so writers of e are serialised.
func (c *cache[K, V]) swap(e *entry[K, V], v V) V {
	if c.vkind == valueBits {
		var u uint64
		*(*V)(unsafe.Pointer(&u)) = v
		u = bits(e).Swap(u)
		return *(*V)(unsafe.Pointer(&u))
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&v))
	p = atomic.SwapPointer((*unsafe.Pointer)(unsafe.Pointer(&e.value)), p)
	return *(*V)(unsafe.Pointer(&p))
}
