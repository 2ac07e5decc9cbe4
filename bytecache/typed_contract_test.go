package bytecache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A value Typed.Get cannot decode is reported as a miss (and counted in
// DecodeErrors, "each a miss"): Stats must count that Get as a miss, not
// as a hit, or the hit ratio of a cache whose old values no longer decode
// (a codec change) reads 100% while every Get misses.
func TestTypedDecodeErrorCountsAsMiss(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	codec := CodecFuncs[string]{
		AppendFunc: func(dst []byte, v string) ([]byte, error) { return append(dst, v...), nil },
		DecodeFunc: func(b []byte) (string, error) {
			if string(b) == "bad" {
				return "", errors.New("undecodable")
			}
			return string(b), nil
		},
	}
	tv := NewTyped[string, string](c, codec)
	if err := tv.Set("good", "ok", 0); err != nil {
		t.Fatal(err)
	}
	if err := tv.Set("broken", "bad", 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := tv.Get("good"); !ok {
		t.Fatal("good: miss")
	}
	if _, ok := tv.Get("broken"); ok {
		t.Fatal("broken: decoded")
	}
	if _, ok := tv.Get("absent"); ok {
		t.Fatal("absent: hit")
	}
	if tv.DecodeErrors() != 1 {
		t.Fatalf("DecodeErrors = %d, want 1", tv.DecodeErrors())
	}
	st := c.Stats()
	if st.Hits != 1 || st.Misses != 2 {
		t.Fatalf("Stats: %d hits, %d misses; want 1 hit (good) and 2 misses (broken, absent)", st.Hits, st.Misses)
	}
}

// NewTyped with a nil codec, or CodecFuncs with a nil function, must fail
// at once with a clear message, not with a nil dereference at the first
// Set or at the first Get that finds a value (which may be much later).
func TestNewTypedNilCodec(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	cases := map[string]func(){
		"nil codec": func() { NewTyped[string, string](c, nil) },
		"nil AppendFunc": func() {
			NewTyped[string, string](c, CodecFuncs[string]{DecodeFunc: StringCodec{}.Decode})
		},
		"nil DecodeFunc": func() {
			NewTyped[string, string](c, CodecFuncs[string]{AppendFunc: StringCodec{}.Append})
		},
		"nil cache": func() { NewTyped[string, string](nil, StringCodec{}) },
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			defer func() {
				p := recover()
				if p == nil {
					t.Fatal("NewTyped accepted it")
				}
				if s, ok := p.(string); !ok || !strings.HasPrefix(s, "bytecache: NewTyped") {
					t.Fatalf("panic %v, want a message from NewTyped", p)
				}
			}()
			f()
		})
	}
}

// SaveToFile promises that on error path is left as it was and its
// temporary file is removed; a panic on the way (a panicking Options.Now,
// read once by SaveTo) must not leave the temporary file behind either.
func TestSaveToFileClockPanicRemovesTemp(t *testing.T) {
	var broken atomic.Bool
	now := func() time.Time {
		if broken.Load() {
			panic("clock broken")
		}
		return time.Unix(1e9, 0)
	}
	c := newCache(t, Options{MaxBytes: 1 << 20, Now: now})
	if err := c.Set([]byte("k"), []byte("v"), -1); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.snap")
	broken.Store(true)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the clock's panic did not reach the caller")
			}
		}()
		c.SaveToFile(path)
	}()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in the directory: %s", e.Name())
	}
}
