package bytecache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAllRewriteTerminates: a yield that sets each entry again (refresh
// its TTL, migrate its value) must not make All run forever: each Set
// appends a new entry at the head, which the iteration then reaches.
func TestAllRewriteTerminates(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20, Shards: 1})
	const keys = 100 // 100 KB, more than one batch (iterBatch)
	val := strings.Repeat("v", 1000)
	for i := range keys {
		set(t, c, fmt.Sprint("k", i), val, -1)
	}
	n := 0
	for e := range c.All() {
		n++
		if n > 100*keys {
			break
		}
		if err := c.Set(e.Key, e.Value, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if n > 2*keys { // each key at most twice (old and new value)
		t.Fatalf("All yielded %d entries (and was stopped) for %d keys each set again when seen", n, keys)
	}
}

// blockWriter runs fn on every block write after the header.
type blockWriter struct {
	bytes.Buffer
	writes int
	fn     func(i int)
}

func (w *blockWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.fn != nil {
		w.fn(w.writes)
	}
	return w.Buffer.Write(p)
}

// TestSaveToBoundedUnderWrites: SaveTo must finish, with a snapshot of
// about the budget, while writers keep setting entries: it chases the head
// instead.
func TestSaveToBoundedUnderWrites(t *testing.T) {
	const budget = 1 << 20
	c := newCache(t, Options{MaxBytes: budget, Shards: 1})
	val := strings.Repeat("x", 1000)
	seq := 0
	fill := func(n int) {
		for range n {
			set(t, c, fmt.Sprint("k", seq), val, -1)
			seq++
		}
	}
	fill(1000)
	w := &blockWriter{}
	w.fn = func(i int) {
		if i < 200 { // a steady write load, stopped so the test ends
			fill(300)
		}
	}
	if err := c.SaveTo(w); err != nil {
		t.Fatal(err)
	}
	if w.Len() > 3*budget {
		t.Fatalf("snapshot of a %d-byte cache is %d bytes (%d writes)", budget, w.Len(), w.writes)
	}
}

// TestSaveToFileRacingClose: a snapshot taken while Close runs must not
// be reported as complete: SaveToFile replaced a good snapshot with an
// empty one and returned nil.
func TestSaveToFileRacingClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.snap")
	var c *Cache
	var closeOnNow atomic.Bool
	clk := newClock()
	now := func() time.Time {
		if closeOnNow.Load() {
			c.Close() // Close runs just as SaveTo starts copying entries
		}
		return clk.Now()
	}
	c = newCache(t, Options{MaxBytes: 1 << 20, Shards: 4, Now: now})
	for i := range 100 {
		set(t, c, fmt.Sprint("k", i), "v", -1)
	}
	if err := c.SaveToFile(path); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	closeOnNow.Store(true)
	err := c.SaveToFile(path)
	after, _ := os.ReadFile(path)
	if err == nil || !bytes.Equal(after, good) {
		d := newCache(t, Options{MaxBytes: 1 << 20})
		lerr := d.LoadFromFile(path)
		t.Fatalf("SaveToFile racing Close: err %v; file now loads with err %v and %d entries (was 100)", err, lerr, d.Len())
	}
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("err %v, want ErrClosed", err)
	}
}

// A key set again during SaveTo before the walk reached its old copy is
// saved with its new value: the walk follows the entries written during
// it (up to a ring's worth), so hot keys are not left out of snapshots
// taken under load.
func TestSaveToKeepsKeysSetAgainDuringIt(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 4 << 20, Shards: 1})
	const keys = 1000
	val := strings.Repeat("o", 1000)
	for i := range keys {
		set(t, c, fmt.Sprint("k", i), val, -1)
	}
	w := &blockWriter{}
	w.fn = func(i int) {
		if i == 1 { // the snapshot's header: no entry copied yet
			for j := range keys {
				set(t, c, fmt.Sprint("k", j), "new", -1)
			}
		}
	}
	if err := c.SaveTo(w); err != nil {
		t.Fatal(err)
	}
	d := newCache(t, Options{MaxBytes: 4 << 20})
	if err := d.LoadFrom(&w.Buffer); err != nil {
		t.Fatal(err)
	}
	if d.Len() != keys {
		t.Fatalf("snapshot restored %d keys, want %d", d.Len(), keys)
	}
	for j := range keys {
		if v, ok := get(d, fmt.Sprint("k", j)); !ok || v != "new" {
			t.Fatalf("k%d restored as %q, %v; want %q", j, v, ok, "new")
		}
	}
}

// A snapshot holding two copies of a key (set again during SaveTo after
// the walk had copied the first) whose later copy has expired by the
// time it is loaded restores neither: the earlier value was overwritten
// before the save ended and must not come back.
func TestLoadFromDropsKeyWhoseLaterCopyExpired(t *testing.T) {
	clock := newClock()
	c := newCache(t, Options{MaxBytes: 4 << 20, Shards: 1, Now: clock.Now})
	set(t, c, "a", "old", -1) // the oldest entry: in the first batch
	filler := strings.Repeat("f", 1000)
	for i := range 2 * saveBatch / 1000 {
		set(t, c, fmt.Sprint("f", i), filler, -1)
	}
	w := &blockWriter{}
	w.fn = func(i int) {
		if i == 2 { // the first block, holding "a", is being written
			set(t, c, "a", "new", time.Minute)
		}
	}
	if err := c.SaveTo(w); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(w.Bytes(), []byte("old")); n != 1 {
		t.Fatalf("the snapshot holds the old value %d times, want 1 (the test's premise)", n)
	}
	clock.Advance(2 * time.Minute)
	d := newCache(t, Options{MaxBytes: 4 << 20, Now: clock.Now})
	if err := d.LoadFrom(&w.Buffer); err != nil {
		t.Fatal(err)
	}
	if v, ok := get(d, "a"); ok {
		t.Fatalf("a restored as %q: an overwritten value came back", v)
	}
}
