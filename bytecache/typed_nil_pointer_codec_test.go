package bytecache

import (
	"strings"
	"testing"
)

// NewTyped accepted a nil pointer of a codec type in the Codec interface
// ((*StringCodec)(nil), a codec variable never set): its doc says it
// panics on a nil codec, but the panic came at the first Set or Get, a nil
// dereference inside the codec. It now panics in NewTyped, naming the type.
func TestNewTypedNilPointerCodec(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	defer func() {
		p := recover()
		if p == nil {
			t.Fatal("NewTyped accepted a nil *StringCodec")
		}
		if s, ok := p.(string); !ok || !strings.HasPrefix(s, "bytecache: NewTyped") || !strings.Contains(s, "*bytecache.StringCodec") {
			t.Fatalf("panic %v, want NewTyped's message naming *bytecache.StringCodec", p)
		}
	}()
	NewTyped[string, string](c, (*StringCodec)(nil))
}
