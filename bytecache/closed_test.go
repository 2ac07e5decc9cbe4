package bytecache

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Typed.Set after Close returns ErrClosed, as Cache.Set does whatever it is
// given: not the codec's error, and without encoding the value.
func TestTypedSetAfterClose(t *testing.T) {
	c := newCache(t, Options{MaxBytes: 1 << 20})
	encoded := 0
	codec := CodecFuncs[string]{
		AppendFunc: func(dst []byte, v string) ([]byte, error) {
			encoded++
			if v == "bad" {
				return dst, errors.New("cannot encode")
			}
			return append(dst, v...), nil
		},
		DecodeFunc: func(b []byte) (string, error) { return string(b), nil },
	}
	tv := NewTyped[string, string](c, codec)
	c.Close()
	for _, v := range []string{"good", "bad"} {
		if err := tv.Set("k", v, 0); !errors.Is(err, ErrClosed) {
			t.Errorf("Typed.Set(%q) after Close: %v, want ErrClosed", v, err)
		}
	}
	if encoded != 0 {
		t.Errorf("Typed.Set after Close encoded %d values, want 0", encoded)
	}
}

// SaveToFile and LoadFromFile after Close return ErrClosed, whatever the
// path: SaveToFile into a missing directory reported the directory (and
// created a temporary file elsewhere), LoadFromFile of a missing file
// reported the file.
func TestSnapshotFilesAfterClose(t *testing.T) {
	dir := t.TempDir()
	c := newCache(t, Options{MaxBytes: 1 << 20})
	c.Close()
	if err := c.SaveToFile(filepath.Join(dir, "missing", "snap")); !errors.Is(err, ErrClosed) {
		t.Errorf("SaveToFile after Close: %v, want ErrClosed", err)
	}
	if err := c.SaveToFile(filepath.Join(dir, "snap")); !errors.Is(err, ErrClosed) {
		t.Errorf("SaveToFile after Close: %v, want ErrClosed", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("SaveToFile after Close left %d files", len(ents))
	}
	if err := c.LoadFromFile(filepath.Join(dir, "missing")); !errors.Is(err, ErrClosed) {
		t.Errorf("LoadFromFile after Close: %v, want ErrClosed", err)
	}
}
