package bytecache

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A snapshot holding two copies of a key (set again during SaveTo
// after the walk had copied the first), whose later copy is too large for
// the loading cache, must not restore the earlier, overwritten value.
func TestLoadFromDropsKeyWhoseLaterCopyIsTooLarge(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 4 << 20, Shards: 1})
	set(t, c, "a", "old", -1) // oldest entry: in the first block
	filler := strings.Repeat("f", 1000)
	for i := range 2 * saveBatch / 1000 {
		set(t, c, fmt.Sprint("f", i), filler, -1)
	}
	w := &blockWriter{}
	w.fn = func(i int) {
		if i == 2 { // the first block, holding "a", is being written
			set(t, c, "a", strings.Repeat("N", 2000), -1)
		}
	}
	if err := c.SaveTo(w); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(w.Bytes(), []byte("old")); n != 1 {
		t.Fatalf("premise: snapshot holds old value %d times", n)
	}
	// A cache whose values are at most 1000 bytes: the later copy of "a"
	// is skipped.
	d := newCache(t, Options{MaxBytes: 4 << 20, MaxValueBytes: 1000})
	if err := d.LoadFrom(&w.Buffer); err != nil {
		t.Fatal(err)
	}
	if v, ok := get(d, "a"); ok {
		t.Fatalf("a restored as %q: a value overwritten before the save ended came back", v)
	}
}

// Setting a key again when its own old entry is the oldest in a full ring
// counts no eviction: no key is lost. (Rewriting a fixed set of keys in
// turn used to report nearly every Set as an eviction with Len constant.)
func TestRewriteCountsNoEvictions(t *testing.T) {
	c := newCache(t, onHeap(Options{MaxBytes: 1 << 10, Shards: 1}))
	val := strings.Repeat("v", 300)
	keys := []string{"a", "b", "c"} // 3 entries of ~304 bytes fill 1 KiB
	for range 10 {
		for _, k := range keys {
			set(t, c, k, val, -1)
		}
	}
	if n := c.Len(); n != len(keys) {
		t.Fatalf("Len %d, want %d", n, len(keys))
	}
	for _, k := range keys {
		if _, ok := get(c, k); !ok {
			t.Fatalf("%s lost", k)
		}
	}
	if ev := c.Stats().Evictions; ev != 0 {
		t.Fatalf("Evictions = %d after 30 Sets of 3 keys that all stayed cached, want 0", ev)
	}
}

// panicReader serves data, then panics.
type panicReader struct{ r *bytes.Reader }

func (p *panicReader) Read(b []byte) (int, error) {
	if p.r.Len() == 0 {
		panic("reader broke")
	}
	return p.r.Read(b)
}

// A Read that panics during LoadFrom does not leak the chunks already
// mapped for the new content (outside the Go heap, nothing else would
// release them).
func TestLoadFromPanicReleasesChunks(t *testing.T) {
	if !offHeapSupported {
		t.Skip("chunks live on the heap in this build")
	}
	c := newCache(t, Options{MaxBytes: 4 << 20, Shards: 4})
	for i := range 2000 {
		set(t, c, fmt.Sprint(i), strings.Repeat("v", 1000), -1)
	}
	var snap bytes.Buffer
	if err := c.SaveTo(&snap); err != nil {
		t.Fatal(err)
	}
	d := newCache(t, Options{MaxBytes: 4 << 20, Shards: 4})
	base := mappedBytes.Load()
	func() {
		defer func() { recover() }()
		d.LoadFrom(&panicReader{bytes.NewReader(snap.Bytes()[:snap.Len()-12])}) // no end block
	}()
	if got := mappedBytes.Load() - base; got != 0 {
		t.Fatalf("%d bytes of chunks still mapped after the LoadFrom that panicked", got)
	}
}
