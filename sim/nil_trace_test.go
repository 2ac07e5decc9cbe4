package sim

import (
	"errors"
	"testing"
)

// A nil *Trace (a load whose error went unchecked) has no keys, and
// replaying it is an error: NewCache and Run panicked reading its keys.
func TestNilTrace(t *testing.T) {
	var tr *Trace
	if n, keys := tr.Len(), tr.Keys(); n != 0 || keys != nil {
		t.Errorf("nil Trace: Len() = %d, Keys() = %v; want 0, nil", n, keys)
	}
	for _, spec := range []string{"default", "lru", NameCache, NameOPT, NameOPTBypass} {
		c, err := tr.NewCache(spec, 10)
		if !errors.Is(err, errNilTrace) || c != nil {
			t.Errorf("nil Trace: NewCache(%q, 10) = %v, %v; want nil, %v", spec, c, err, errNilTrace)
		}
		r, err := tr.Run(spec, 10)
		if !errors.Is(err, errNilTrace) || r != (Result{}) {
			t.Errorf("nil Trace: Run(%q, 10) = %+v, %v; want {}, %v", spec, r, err, errNilTrace)
		}
	}
}
