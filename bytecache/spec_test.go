package bytecache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Values larger than 64 KiB whose keys all share one 64-bit hash (the case
// fastcache's SetBig gets wrong) are never confused with one another, across
// wraps of the ring, and straddling chunks.
func TestLargeValuesCollide(t *testing.T) {
	c := newCache(t, withChunkShift(Options{MaxBytes: 2 << 20, Shards: 1}, 12))
	c.forceCollisions(0) // every key has the same 64-bit hash
	model := map[string][]byte{}
	for i := range 60 {
		key := fmt.Sprintf("big%d", i%12)
		v := bytes.Repeat([]byte{byte(i)}, 64<<10+1+i*4099)
		if err := c.Set([]byte(key), v, 0); err != nil {
			t.Fatal(err)
		}
		model[key] = v
		for k, want := range model {
			if got, ok := c.Get(nil, []byte(k)); ok && !bytes.Equal(got, want) {
				t.Fatalf("Set %d: Get(%q) returned another value (%d bytes of %#x, want %d of %#x)",
					i, k, len(got), got[0], len(want), want[0])
			}
		}
		if got, ok := c.Get(nil, []byte(key)); !ok || !bytes.Equal(got, v) {
			t.Fatalf("just-set %q: ok=%v", key, ok)
		}
	}
	s := c.Stats()
	if s.Collisions == 0 || s.Evictions == 0 {
		t.Fatalf("exercised too little: %+v", s)
	}
	mustCheck(t, c)
}

// Eviction is first in, first out by the time of the last Set: with one
// shard, the entries are evicted exactly in the order they were last set;
// setting a key again makes it the newest, and its old copy is reclaimed as
// dead space, not counted as an eviction.
func TestFIFOEvictionOrder(t *testing.T) {
	c := newCache(t, withChunkShift(Options{MaxBytes: 4 << 10, Shards: 1}, 8))
	value := strings.Repeat("v", 100) // 2+3+100 = 105 bytes an entry with a 3-byte key
	key := func(i int) string { return fmt.Sprintf("%03d", i) }
	n := 0
	for ; c.Stats().Evictions == 0; n++ {
		set(t, c, key(n), value, -1)
	}
	// The last Set evicted key(0); the ring holds key(1) .. key(n-1).
	present := func(want map[string]bool) {
		t.Helper()
		for k, w := range want {
			if _, ok := get(c, k); ok != w {
				t.Fatalf("Get(%q) ok=%v, want %v (FIFO order broken)", k, ok, w)
			}
		}
	}
	want := map[string]bool{key(0): false}
	for i := 1; i < n; i++ {
		want[key(i)] = true
	}
	present(want)
	// key(5) again: it evicts key(1) and becomes the newest; its old copy
	// stays in the ring as dead space.
	set(t, c, key(5), value, -1)
	want[key(1)] = false
	present(want)
	// Five new entries: they evict key(2), key(3) and key(4); the fourth
	// reuses the dead copy of key(5) and evicts nothing; the fifth evicts
	// key(6). key(5), set again, stays.
	for i := range 5 {
		k := key(900 + i)
		set(t, c, k, value, -1)
		want[k] = true
	}
	want[key(2)], want[key(3)], want[key(4)], want[key(6)] = false, false, false, false
	present(want)
	if s := c.Stats(); s.Evictions != 6 || s.Entries != uint64(n-1) {
		t.Fatalf("stats %+v; want 6 evictions and %d entries", s, n-1)
	}
	mustCheck(t, c)
}

// Each cache draws its own hash seed: keys hash differently in two caches.
func TestSeedPerInstance(t *testing.T) {
	a := newCache(t, Options{MaxBytes: 1 << 20})
	b := newCache(t, Options{MaxBytes: 1 << 20})
	same := 0
	for i := range 16 {
		k := fmt.Appendf(nil, "key%d", i)
		if a.hash.sum(k) == b.hash.sum(k) {
			same++
		}
	}
	if same != 0 {
		t.Fatalf("%d of 16 keys hash the same in two caches: the seed is not per instance", same)
	}
}

// The heap objects a cache allocates depend on its budget (chunks) and on
// its index tables, never on the number of entries: storing 50,000
// entries into a cache whose chunks are all allocated takes a handful of
// allocations (the index doublings), not one per entry.
func TestAllocsIndependentOfEntries(t *testing.T) {
	const shards = 4
	c := newCache(t, onHeap(Options{MaxBytes: 1 << 20, Shards: shards}))
	value := make([]byte, 8)
	var key []byte
	fill := func(from, n int) {
		for i := from; i < from+n; i++ {
			key = strconv.AppendInt(append(key[:0], 'k'), int64(i), 10)
			if err := c.Set(key, value, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill(0, 100_000) // every chunk allocated, the index at its size
	if s := c.Stats(); s.ChunkBytes != s.BytesMax || s.Evictions == 0 {
		t.Fatalf("warm-up did not fill the cache: %+v", s)
	}
	next := 100_000
	allocs := testing.AllocsPerRun(1, func() {
		fill(next, 50_000)
		next += 50_000
	})
	// Sets of new keys evicting old ones, in a full ring: the live count
	// stays put, so the index neither grows nor shrinks (a few resizes at
	// most per shard).
	t.Logf("%v allocations", allocs)
	if allocs > 4*shards {
		t.Fatalf("50,000 Sets allocated %v times", allocs)
	}
}

// A snapshot of another version, or with flags this version cannot read,
// is refused with ErrCorrupt even though its header checksum is right, and
// the cache is left as it was.
func TestSnapshotVersionRefused(t *testing.T) {
	src := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	set(t, src, "a", "1", -1)
	var buf bytes.Buffer
	if err := src.SaveTo(&buf); err != nil {
		t.Fatal(err)
	}
	c := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	set(t, c, "existing", "entry", -1)
	before := contents(c)
	for _, tc := range []struct {
		name           string
		version, flags uint32
	}{
		{"version 2", 2, 0},
		{"version 0", 0, 0},
		{"flags", snapVersion, 1},
	} {
		snap := bytes.Clone(buf.Bytes())
		binary.LittleEndian.PutUint32(snap[8:], tc.version)
		binary.LittleEndian.PutUint32(snap[12:], tc.flags)
		binary.LittleEndian.PutUint32(snap[16:], crc32.Checksum(snap[:16], castagnoli))
		err := c.LoadFrom(bytes.NewReader(snap))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "version") {
			t.Fatalf("%s: LoadFrom = %v, want ErrCorrupt naming the version", tc.name, err)
		}
		if got := contents(c); !slices.Equal(got, before) {
			t.Fatalf("%s: a refused snapshot changed the cache: %v", tc.name, got)
		}
	}
}
