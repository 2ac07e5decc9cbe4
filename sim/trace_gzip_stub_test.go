package sim

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// A source of the single byte 0x1f (a gzip file cut after its first byte)
// was read as a text trace of one key, "\x1f"; it is a truncated gzip
// stream. Two bytes that are not gzip's magic stay text.
func TestOneByteGzipStubIsTruncated(t *testing.T) {
	r := NewReader(bytes.NewReader([]byte{0x1f}))
	for range r.All() {
		t.Error("a key was read from a one-byte 0x1f file")
	}
	if err := r.Err(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Err = %v; want io.ErrUnexpectedEOF (a truncated gzip stream)", err)
	}
	r = NewReader(bytes.NewReader([]byte{0x1f, 'a'}))
	n := 0
	for range r.All() {
		n++
	}
	if n != 1 || r.Err() != nil {
		t.Errorf("the text \"\\x1fa\": %d keys, %v; want 1 key, no error", n, r.Err())
	}
}
