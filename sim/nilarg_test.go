package sim

import (
	"strings"
	"testing"
)

// NewOPT of a nil Trace returns an error instead of panicking (it read the
// Trace's next-use table through the nil pointer).
func TestNewOPTNilTrace(t *testing.T) {
	for _, bypass := range []bool{false, true} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("NewOPT(nil, 2, %v) panicked: %v", bypass, p)
				}
			}()
			o, err := NewOPT(nil, 2, bypass)
			if err == nil || !strings.Contains(err.Error(), "nil Trace") || o != nil {
				t.Errorf("NewOPT(nil, 2, %v) = %v, %v; want nil and an error about the nil Trace", bypass, o, err)
			}
		}()
	}
}

// A Reader of a nil io.Reader reads no key and reports the problem in Err
// (Next panicked, reading from nil), and so does ReadAll.
func TestNewReaderNil(t *testing.T) {
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("reading from NewReader(nil) panicked: %v", p)
		}
	}()
	r := NewReader(nil)
	if k, ok := r.Next(); ok {
		t.Errorf("NewReader(nil).Next() = %d, true; want false", k)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "nil io.Reader") {
		t.Errorf("NewReader(nil).Err() = %v; want an error about the nil io.Reader", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	keys, err := ReadAll(nil)
	if err == nil || keys != nil {
		t.Errorf("ReadAll(nil) = %v, %v; want nil and an error", keys, err)
	}
}
