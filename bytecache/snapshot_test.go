package bytecache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// contents returns the cache's live entries as a sorted list, with the
// expiry of each.
func contents(c *Cache) []string {
	var out []string
	for e := range c.All() {
		exp := "never"
		if !e.Expires.IsZero() {
			exp = e.Expires.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, fmt.Sprintf("%q=%q@%s", e.Key, e.Value, exp))
	}
	slices.Sort(out)
	return out
}

func TestSnapshotRoundTrip(t *testing.T) {
	clk := newClock()
	src := newCache(t, withChunkShift(Options{MaxBytes: 64 << 10, Shards: 4, Now: clk.Now}, 8))
	for i := range 300 {
		ttl := time.Duration(-1)
		if i%3 == 0 {
			ttl = time.Duration(i) * time.Second
		}
		set(t, src, fmt.Sprintf("key-%d", i), fmt.Sprintf("value %d %s", i, bytes.Repeat([]byte{'x'}, i%50)), ttl)
	}
	src.Delete([]byte("key-5"))
	set(t, src, "key-6", "overwritten", -1)
	set(t, src, "big", string(bytes.Repeat([]byte("B"), 9000)), -1)
	clk.Advance(10 * time.Second) // key-0 .. key-9 with TTL expire
	want := contents(src)

	var buf bytes.Buffer
	if err := src.SaveTo(&buf); err != nil {
		t.Fatal(err)
	}
	// A cache with different options (and its own hash seed) loads it.
	dst := newCache(t, Options{MaxBytes: 1 << 20, Shards: 8, Now: clk.Now})
	set(t, dst, "old", "content", 0)
	if err := dst.LoadFrom(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := contents(dst); !slices.Equal(got, want) {
		t.Fatalf("loaded %d entries, want %d:\n%v\nwant\n%v", len(got), len(want), got, want)
	}
	if _, ok := get(dst, "old"); ok {
		t.Fatal("LoadFrom kept the previous content")
	}
	mustCheck(t, dst)
	// TTLs are absolute: once the clock passes them, loaded entries expire.
	clk.Advance(290 * time.Second)
	n := 0
	for e := range dst.All() {
		if !e.Expires.IsZero() {
			n++
		}
	}
	if n != 0 {
		t.Fatalf("%d entries with TTL survived past their expiry", n)
	}

	// A smaller cache keeps what fits (the newest entries of each shard).
	small := newCache(t, Options{MaxBytes: 8 << 10, Shards: 2, Now: clk.Now})
	if err := small.LoadFrom(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, small)
	if small.Len() == 0 {
		t.Fatal("nothing loaded into the small cache")
	}
}

func TestSnapshotFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.snap")
	c := newCache(t, Options{MaxBytes: 1 << 20})
	set(t, c, "a", "1", 0)
	if err := c.SaveToFile(path); err != nil {
		t.Fatal(err)
	}
	set(t, c, "b", "2", 0)
	if err := c.SaveToFile(path); err != nil { // replaces the file
		t.Fatal(err)
	}
	d := newCache(t, Options{MaxBytes: 1 << 20})
	if err := d.LoadFromFile(path); err != nil {
		t.Fatal(err)
	}
	if got, want := contents(d), contents(c); !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	if err := d.SaveToFile(filepath.Join(dir, "missing", "x")); err == nil {
		t.Fatal("SaveToFile into a missing directory succeeded")
	}
	if err := d.LoadFromFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LoadFromFile of a missing file: %v", err)
	}
}

// TestSnapshotCorrupt corrupts every byte of a small snapshot and
// truncates it at every length: each must be refused with ErrCorrupt and
// leave the cache exactly as it was.
func TestSnapshotCorrupt(t *testing.T) {
	clk := newClock()
	src := newCache(t, Options{MaxBytes: 8 << 10, Shards: 2, Now: clk.Now})
	set(t, src, "alpha", "one", -1)
	set(t, src, "beta", "two", time.Hour)
	set(t, src, "gamma", "", -1)
	var buf bytes.Buffer
	if err := src.SaveTo(&buf); err != nil {
		t.Fatal(err)
	}
	snap := buf.Bytes()

	c := newCache(t, withChunkShift(Options{MaxBytes: 8 << 10, Shards: 2, Now: clk.Now}, 6))
	set(t, c, "existing", "entry", -1)
	set(t, c, "other", "value", time.Hour)
	before := contents(c)
	stats := c.Stats()
	unchanged := func(what string) {
		t.Helper()
		if got := contents(c); !slices.Equal(got, before) {
			t.Fatalf("%s changed the cache: %v", what, got)
		}
		if s := c.Stats(); s != stats {
			t.Fatalf("%s changed the stats: %+v, was %+v", what, s, stats)
		}
	}
	for n := range len(snap) {
		err := c.LoadFrom(bytes.NewReader(snap[:n]))
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d: %v", n, err)
		}
		unchanged(fmt.Sprintf("truncation at %d", n))
	}
	bad := slices.Clone(snap)
	for i := range bad {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			bad[i] ^= x
			err := c.LoadFrom(bytes.NewReader(bad))
			bad[i] ^= x
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#x: %v", i, x, err)
			}
			unchanged(fmt.Sprintf("flipping byte %d", i))
		}
	}
	// A read error other than EOF is returned as it is.
	boom := errors.New("boom")
	if err := c.LoadFrom(io.MultiReader(bytes.NewReader(snap[:30]), errReader{boom})); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("read error: %v", err)
	}
	unchanged("a read error")
	// The intact snapshot loads.
	if err := c.LoadFrom(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if got, want := contents(c), contents(src); !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestSnapshotHugeLength: a corrupt block length must not make LoadFrom
// allocate for data that is not there.
func TestSnapshotHugeLength(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	var buf bytes.Buffer
	if err := c.SaveTo(&buf); err != nil {
		t.Fatal(err)
	}
	snap := buf.Bytes()[:snapHeaderLen]
	snap = append(snap, 0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0, 'x')
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := c.LoadFrom(bytes.NewReader(snap)); !errors.Is(err, ErrCorrupt) {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*readStep {
		t.Fatalf("LoadFrom allocated %d bytes for a 1-byte block", n)
	}
}
