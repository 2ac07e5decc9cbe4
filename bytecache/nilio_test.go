package bytecache

import (
	"slices"
	"strings"
	"testing"
)

// SaveTo and LoadFrom refuse a nil io.Writer or io.Reader with an error
// (they panicked on it) and leave the cache as it was.
func TestSnapshotNilReaderWriter(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 64 << 10, Shards: 4})
	set(t, c, "k", "v", -1)
	want := contents(c)
	if err := c.SaveTo(nil); err == nil || !strings.Contains(err.Error(), "nil io.Writer") {
		t.Fatalf("SaveTo(nil) = %v; want an error naming the nil io.Writer", err)
	}
	if err := c.LoadFrom(nil); err == nil || !strings.Contains(err.Error(), "nil io.Reader") {
		t.Fatalf("LoadFrom(nil) = %v; want an error naming the nil io.Reader", err)
	}
	if got := contents(c); !slices.Equal(got, want) {
		t.Fatalf("contents after the refused calls = %v; want %v", got, want)
	}
}
