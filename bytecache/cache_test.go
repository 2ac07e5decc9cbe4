package bytecache

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manual clock, safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func newClock() *fakeClock {
	f := &fakeClock{}
	f.ns.Store(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return f
}

func (f *fakeClock) Now() time.Time          { return time.Unix(0, f.ns.Load()) }
func (f *fakeClock) Advance(d time.Duration) { f.ns.Add(int64(d)) }

func newCache(t testing.TB, o Options) *Cache {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustCheck(t testing.TB, c *Cache) {
	t.Helper()
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	if got, max := c.chunkCapacity(), c.Stats().BytesMax; got > max {
		t.Fatalf("chunks hold %d bytes, budget %d", got, max)
	}
}

func get(c *Cache, key string) (string, bool) {
	v, ok := c.Get(nil, []byte(key))
	return string(v), ok
}

func set(t testing.TB, c *Cache, key, value string, ttl time.Duration) {
	t.Helper()
	if err := c.Set([]byte(key), []byte(value), ttl); err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
}

func TestBasic(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	if _, ok := get(c, "a"); ok {
		t.Fatal("empty cache hit")
	}
	set(t, c, "a", "1", 0)
	set(t, c, "b", "22", 0)
	set(t, c, "", "empty key", 0)
	set(t, c, "empty value", "", 0)
	for k, want := range map[string]string{"a": "1", "b": "22", "": "empty key", "empty value": ""} {
		if v, ok := get(c, k); !ok || v != want {
			t.Fatalf("Get(%q) = %q, %v; want %q", k, v, ok, want)
		}
		if !c.Has([]byte(k)) {
			t.Fatalf("Has(%q) = false", k)
		}
	}
	if n := c.Len(); n != 4 {
		t.Fatalf("Len = %d, want 4", n)
	}
	set(t, c, "a", "replaced", 0)
	if v, _ := get(c, "a"); v != "replaced" {
		t.Fatalf("after overwrite Get = %q", v)
	}
	if n := c.Len(); n != 4 {
		t.Fatalf("Len after overwrite = %d, want 4", n)
	}
	if !c.Delete([]byte("a")) || c.Delete([]byte("a")) {
		t.Fatal("Delete should report true once")
	}
	if _, ok := get(c, "a"); ok || c.Has([]byte("a")) {
		t.Fatal("deleted key found")
	}
	if n := c.Len(); n != 3 {
		t.Fatalf("Len after delete = %d, want 3", n)
	}
	mustCheck(t, c)
	s := c.Stats()
	if s.Sets != 5 || s.Deletes != 1 || s.Entries != 3 || s.Hits != 5 || s.Misses != 2 {
		t.Fatalf("stats %+v", s)
	}
	c.Clear()
	if n := c.Len(); n != 0 {
		t.Fatalf("Len after Clear = %d", n)
	}
	if s := c.Stats(); s.ChunkBytes != 0 || s.IndexBytes != 0 || s.Sets != 5 {
		t.Fatalf("after Clear: %+v", s)
	}
	set(t, c, "x", "y", 0)
	if v, _ := get(c, "x"); v != "y" {
		t.Fatal("Set after Clear lost")
	}
	mustCheck(t, c)
}

func TestGetAppends(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	set(t, c, "k", "value", 0)
	dst := []byte("prefix:")
	got, ok := c.Get(dst, []byte("k"))
	if !ok || string(got) != "prefix:value" {
		t.Fatalf("Get = %q, %v", got, ok)
	}
	got, ok = c.Get(dst, []byte("missing"))
	if ok || string(got) != "prefix:" {
		t.Fatalf("miss Get = %q, %v", got, ok)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{MaxBytes: -1},
		{Shards: 3},
		{Shards: -1},
		{MaxBytes: 1 << 20, Shards: 2048}, // 512 bytes a shard
		{DefaultTTL: -time.Second},
		{MaxKeyBytes: 1 << 16},
		{MaxKeyBytes: -1},
		{MaxBytes: 1 << 20, Shards: 1, MaxValueBytes: 1 << 20},
		{MaxValueBytes: -1},
	} {
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
	c := newCache(t, Options{})
	if s := c.Stats(); s.BytesMax != defaultMaxBytes {
		t.Fatalf("default BytesMax %d", s.BytesMax)
	}
	if c.cf.maxValue != int(c.cf.ringSize)-maxHeaderLen || c.cf.maxKey != maxKeyLimit {
		t.Fatalf("defaults %+v", c.cf)
	}
	for _, tc := range []struct {
		maxBytes int64
		procs    int
		want     int
	}{
		{32 << 20, 2, 128},
		{32 << 20, 64, 128},
		{1 << 30, 2, 128},
		{1 << 30, 8, 512},
		{1 << 30, 64, 1024},
		{1 << 20, 8, 4},
		{4 << 10, 1, 1},
		{1 << 40, 2, 1024},
		{1 << 50, 2, 1 << 20},
	} {
		if got := defaultShards(tc.maxBytes, tc.procs); got != tc.want && tc.want <= maxShards {
			t.Errorf("defaultShards(%d, %d) = %d, want %d", tc.maxBytes, tc.procs, got, tc.want)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Must with bad options did not panic")
			}
		}()
		Must(Options{Shards: 3})
	}()
}

func TestTooLarge(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1, MaxKeyBytes: 10})
	set(t, c, "k", "old", 0)
	if err := c.Set([]byte("01234567890"), nil, 0); !errors.Is(err, ErrKeyTooLarge) {
		t.Fatalf("long key: %v", err)
	}
	maxV := c.cf.maxValue
	if err := c.Set([]byte("k"), make([]byte, maxV+1), 0); !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("long value: %v", err)
	}
	// A value of MaxValueBytes fits with an empty key, not with a long one.
	if err := c.Set([]byte("0123456789"), make([]byte, maxV), time.Hour); !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("value+key beyond the shard: %v", err)
	}
	if v, ok := get(c, "k"); !ok || v != "old" {
		t.Fatalf("a refused Set changed the entry: %q, %v", v, ok)
	}
	if err := c.Set(nil, make([]byte, maxV), time.Hour); err != nil {
		t.Fatalf("largest value: %v", err)
	}
	if err := c.Set([]byte("k"), make([]byte, maxV-1), -1); err != nil {
		t.Fatalf("largest value for a 1-byte key: %v", err)
	}
	if v, ok := c.Get(nil, []byte("k")); !ok || len(v) != maxV-1 {
		t.Fatalf("largest value read back: %d bytes, %v", len(v), ok)
	}
	mustCheck(t, c)
}

// TestLargeValues stores values far larger than a chunk (and than 64 KiB)
// across many wraps of the ring.
func TestLargeValues(t *testing.T) {
	t.Run("heap", func(t *testing.T) { testLargeValues(t, onHeap(Options{MaxBytes: 4 << 20, Shards: 2})) })
	t.Run("default", func(t *testing.T) { testLargeValues(t, Options{MaxBytes: 4 << 20, Shards: 2}) })
	t.Run("small-chunks", func(t *testing.T) {
		testLargeValues(t, withChunkShift(Options{MaxBytes: 4 << 20, Shards: 2}, 12))
	})
}

func testLargeValues(t *testing.T, o Options) {
	c := newCache(t, o)
	model := map[string][]byte{}
	for i := range 40 {
		key := fmt.Sprintf("big%d", i%15)
		v := bytes.Repeat([]byte{byte(i)}, 100<<10+i*7919)
		if err := c.Set([]byte(key), v, 0); err != nil {
			t.Fatal(err)
		}
		model[key] = v
		for k, want := range model {
			if got, ok := c.Get(nil, []byte(k)); ok && !bytes.Equal(got, want) {
				t.Fatalf("Get(%q) returned a wrong value", k)
			}
		}
		if got, ok := c.Get(nil, []byte(key)); !ok || !bytes.Equal(got, v) {
			t.Fatalf("just-set %q: ok=%v", key, ok)
		}
	}
	mustCheck(t, c)
	if s := c.Stats(); s.Evictions == 0 {
		t.Fatalf("expected evictions: %+v", s)
	}
}

func TestTTL(t *testing.T) {
	clk := newClock()
	c := newCache(t, Options{MaxBytes: 1 << 20, DefaultTTL: time.Minute, Now: clk.Now})
	set(t, c, "default", "d", 0)
	set(t, c, "short", "s", time.Second)
	set(t, c, "forever", "f", -1)

	clk.Advance(time.Second - 1)
	if _, ok := get(c, "short"); !ok {
		t.Fatal("entry expired 1ns early")
	}
	clk.Advance(1) // exactly at expiry
	if _, ok := get(c, "short"); ok || c.Has([]byte("short")) {
		t.Fatal("entry returned at its expiry instant")
	}
	if n := c.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2", n)
	}
	clk.Advance(time.Minute)
	if c.Has([]byte("default")) {
		t.Fatal("DefaultTTL not applied")
	}
	if n := c.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1 (the entry without TTL)", n)
	}
	if c.Delete([]byte("default")) {
		t.Fatal("Delete of an expired entry reported true")
	}
	if v, ok := get(c, "forever"); !ok || v != "f" {
		t.Fatal("entry without expiry lost")
	}
	s := c.Stats()
	if s.Expirations != 2 {
		t.Fatalf("Expirations = %d, want 2", s.Expirations)
	}
	mustCheck(t, c)

	// Expired entries the ring passes over count as expirations, not
	// evictions.
	c2 := newCache(t, Options{MaxBytes: 4 << 10, Shards: 1, Now: clk.Now})
	for i := range 10 {
		set(t, c2, fmt.Sprint(i), strings.Repeat("x", 200), time.Second)
	}
	clk.Advance(time.Second)
	for i := range 40 {
		set(t, c2, fmt.Sprint("n", i), strings.Repeat("y", 200), -1)
	}
	if s := c2.Stats(); s.Expirations != 10 {
		t.Fatalf("stats %+v: want 10 expirations", s)
	}
	mustCheck(t, c2)
}

func TestTTLOverflow(t *testing.T) {
	clk := newClock()
	c := newCache(t, Options{MaxBytes: 1 << 20, Now: clk.Now})
	set(t, c, "k", "v", time.Duration(1<<63-1))
	clk.Advance(100 * 365 * 24 * time.Hour)
	if _, ok := get(c, "k"); !ok {
		t.Fatal("entry with a huge TTL expired")
	}
}

func TestCollisions(t *testing.T) {
	for _, mask := range []uint64{0, 0xff} {
		t.Run(fmt.Sprintf("mask=%#x", mask), func(t *testing.T) {
			c := newCache(t, withChunkShift(Options{MaxBytes: 8 << 10, Shards: 2}, 6))
			c.forceCollisions(mask)
			model := map[string]string{}
			for i := range 1000 {
				k := fmt.Sprintf("key%d", i%150)
				v := fmt.Sprintf("value of %s #%d", k, i)
				switch i % 7 {
				case 3:
					c.Delete([]byte(k))
					delete(model, k)
				default:
					set(t, c, k, v, 0)
					model[k] = v
					if got, ok := get(c, k); !ok || got != v {
						t.Fatalf("just-set %q: %q, %v", k, got, ok)
					}
				}
				for j := i % 10; j < 150 && i%5 == 0; j += 3 {
					k := fmt.Sprintf("key%d", j)
					got, ok := get(c, k)
					if want, in := model[k]; ok && (!in || got != want) {
						t.Fatalf("Get(%q) = %q, want %q (in model: %v)", k, got, want, in)
					}
				}
				if i%250 == 0 {
					mustCheck(t, c)
				}
			}
			if mask == 0 && c.Stats().Collisions == 0 {
				t.Fatal("no collisions counted")
			}
			mustCheck(t, c)
		})
	}
}

func TestNoAliasing(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	key, val := []byte("key"), []byte("value")
	if err := c.Set(key, val, 0); err != nil {
		t.Fatal(err)
	}
	key[0], val[0] = 'X', 'X' // the caller reuses its buffers
	if _, ok := c.Get(nil, []byte("Xey")); ok {
		t.Fatal("cache aliased the key")
	}
	got, ok := c.Get(nil, []byte("key"))
	if !ok || string(got) != "value" {
		t.Fatalf("cache aliased the value: %q", got)
	}
	got[0] = 'Y' // the caller modifies what Get returned
	if again, _ := c.Get(nil, []byte("key")); string(again) != "value" {
		t.Fatalf("Get returned the cache's memory: %q", again)
	}
	for e := range c.All() {
		e.Value[0] = 'Z' // yielded slices are copies too
	}
	if again, _ := c.Get(nil, []byte("key")); string(again) != "value" {
		t.Fatalf("All yielded the cache's memory: %q", again)
	}
}

func TestGetAllocs(t *testing.T) {
	clk := newClock()
	c := newCache(t, Options{MaxBytes: 1 << 20, Now: clk.Now})
	set(t, c, "key", strings.Repeat("v", 100), 0)
	set(t, c, "ttl", strings.Repeat("v", 100), time.Hour)
	key, ttlKey, missing := []byte("key"), []byte("ttl"), []byte("missing")
	dst := make([]byte, 0, 128)
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := c.Get(dst[:0], key); !ok {
			t.Fatal("miss")
		}
		if _, ok := c.Get(dst[:0], ttlKey); !ok {
			t.Fatal("miss")
		}
		c.Get(dst[:0], missing)
		c.Has(key)
	}); n != 0 {
		t.Fatalf("Get allocates %v times per run", n)
	}
}

// TestOffHeapRelease checks that chunks mapped outside the heap are
// released by Close, Clear and LoadFrom, and for a cache dropped without
// Close, by its cleanup.
func TestOffHeapRelease(t *testing.T) {
	if !offHeapSupported {
		t.Skip("chunks live on the heap in this build")
	}
	base := mappedBytes.Load()
	c := newCache(t, Options{MaxBytes: 4 << 20, Shards: 4})
	if !c.offHeap {
		t.Fatal("chunks on the heap")
	}
	for i := range 2000 {
		set(t, c, fmt.Sprint(i), strings.Repeat("v", 1000), 0)
	}
	if got, want := mappedBytes.Load()-base, c.Stats().ChunkBytes; got != want || got != 4<<20 {
		t.Fatalf("mapped %d bytes, stats %d", got, want)
	}
	var snap bytes.Buffer
	if err := c.SaveTo(&snap); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFrom(bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := mappedBytes.Load() - base; got != c.Stats().ChunkBytes {
		t.Fatalf("after LoadFrom: mapped %d bytes, stats %d", got, c.Stats().ChunkBytes)
	}
	if err := c.LoadFrom(bytes.NewReader(snap.Bytes()[:snap.Len()-1])); err == nil {
		t.Fatal("truncated snapshot loaded")
	}
	if got := mappedBytes.Load() - base; got != c.Stats().ChunkBytes {
		t.Fatalf("after a failed LoadFrom: mapped %d bytes, stats %d", got, c.Stats().ChunkBytes)
	}
	c.Clear()
	if got := mappedBytes.Load() - base; got != 0 {
		t.Fatalf("after Clear: %d bytes mapped", got)
	}
	set(t, c, "k", "v", 0)
	c.Close()
	if got := mappedBytes.Load() - base; got != 0 {
		t.Fatalf("after Close: %d bytes mapped", got)
	}

	func() {
		d := Must(Options{MaxBytes: 4 << 20, Shards: 4})
		set(t, d, "k", "v", 0)
	}()
	if mappedBytes.Load() == base {
		t.Fatal("nothing mapped")
	}
	// Wait for the dropped cache's cleanup, which runs after a collection.
	deadline := time.Now().Add(60 * time.Second) // a bound on the failure only
	for mappedBytes.Load() != base {
		if time.Now().After(deadline) {
			t.Fatalf("a dropped cache's chunks were not released: %d bytes", mappedBytes.Load()-base)
		}
		runtime.GC()
		runtime.Gosched()
	}
}

func TestClose(t *testing.T) {
	c, err := New(Options{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	set(t, c, "k", "v", 0)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := c.Set([]byte("k"), []byte("v"), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Set after Close: %v", err)
	}
	if _, ok := get(c, "k"); ok || c.Len() != 0 || c.Has([]byte("k")) {
		t.Fatal("entries survive Close")
	}
	if s := c.Stats(); s.ChunkBytes != 0 || c.chunkCapacity() != 0 {
		t.Fatalf("Close kept chunks: %+v", s)
	}
	if err := c.SaveTo(&bytes.Buffer{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("SaveTo after Close: %v", err)
	}
	if err := c.LoadFrom(&bytes.Buffer{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("LoadFrom after Close: %v", err)
	}
}

// A TTL counts from the clock's time, whatever it is: before 1970 (a
// negative Unix time) too.
func TestTTLBefore1970(t *testing.T) {
	clk := newClock()
	clk.ns.Store(time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC).UnixNano())
	c := newCache(t, Options{MaxBytes: 1 << 20, Now: clk.Now})
	set(t, c, "k", "v", time.Second)
	for e := range c.All() {
		if want := clk.Now().Add(time.Second); !e.Expires.Equal(want) {
			t.Errorf("expires %v, want %v", e.Expires.UTC(), want.UTC())
		}
	}
	clk.Advance(time.Minute)
	if v, ok := get(c, "k"); ok {
		t.Fatalf("an entry with a TTL of 1s is still there a minute later: %q", v)
	}
}

// The index shrinks with the live entries: after deletes, and after large
// entries evict many small ones.
func TestIndexShrinks(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 4 << 20, Shards: 1})
	for i := range 30000 {
		set(t, c, fmt.Sprint(i), "v", 0)
	}
	peak := c.Stats().IndexBytes
	for i := range 29990 {
		c.Delete([]byte(fmt.Sprint(i)))
	}
	mustCheck(t, c)
	if s := c.Stats(); s.Entries != 10 || s.IndexBytes > 8*8*10 {
		t.Errorf("%d entries in an index of %d bytes (%d at the peak); want 10 in at most 80 slots", s.Entries, s.IndexBytes, peak)
	}
	for i := 29990; i < 30000; i++ {
		if v, ok := get(c, fmt.Sprint(i)); !ok || v != "v" {
			t.Fatalf("key %d: %q, %v", i, v, ok)
		}
	}

	small := 0
	for ; c.Stats().Evictions == 0; small++ {
		set(t, c, fmt.Sprint("s", small), "v", 0)
	}
	big := strings.Repeat("x", 64<<10)
	for i := range 64 {
		set(t, c, fmt.Sprint("b", i), big, 0)
	}
	mustCheck(t, c)
	if s := c.Stats(); s.IndexBytes > 8*8*int64(s.Entries) {
		t.Errorf("%d entries in an index of %d bytes after large entries evicted %d small ones", s.Entries, s.IndexBytes, small)
	}
}

// Every full comparison of a key that differed from the key sought counts
// as a collision: in Set, Has and Delete as in Get.
func TestCollisionsCounted(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20, Shards: 1})
	c.forceCollisions(0) // every key has the same hash
	set(t, c, "a", "1", 0)
	want := uint64(0)
	for _, op := range []func(){
		func() { set(t, c, "b", "2", 0) }, // compares "a"
		func() { c.Has([]byte("b")) },     // "a"
		func() { get(c, "b") },            // "a"
		func() { c.Delete([]byte("b")) },  // "a"
	} {
		op()
		want++
		if n := c.Stats().Collisions; n != want {
			t.Fatalf("Collisions = %d after %d operations; want %d", n, want, want)
		}
	}
}
