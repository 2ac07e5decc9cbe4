package bytecache

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// SaveToFile through a symbolic link (a snapshot path linked to a
// persistent volume) replaces the file the link leads to and keeps the link.
// It renamed its temporary file over the link itself: the link became a
// regular file next to it and the file it pointed to kept the previous
// snapshot, which a restart that loads the target warmed up from.
func TestSaveToFileThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "volume"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "volume", "cache.snap")
	link := filepath.Join(dir, "cache.snap")
	c := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	set(t, c, "a", "old", -1)
	if err := c.SaveToFile(target); err != nil { // the previous snapshot, on the volume
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	set(t, c, "a", "new", -1)
	if err := c.SaveToFile(link); err != nil {
		t.Fatal(err)
	}
	d := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	lerr := d.LoadFromFile(target)
	v, _ := get(d, "a")
	st, err := os.Lstat(link)
	isLink := err == nil && st.Mode()&os.ModeSymlink != 0
	if lerr != nil || v != "new" || !isLink {
		t.Fatalf("after SaveToFile through a link: the file it pointed to loads with err %v, a=%q (want \"new\"); path still a link: %v",
			lerr, v, isLink)
	}
}

// SaveToFile saves to a valid file name of 250 bytes. Its temporary file
// was named "." + base(path) + ".tmp-" and up to 10 random digits, so a last
// element of 249 bytes or more (the limit is 255) always failed, and one of
// 240 to 248 bytes at random, with "file name too long" about a name the
// caller never gave.
func TestSaveToFileLongName(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("s", 250))
	// The name itself is valid here.
	if err := os.WriteFile(path, []byte("previous"), 0o600); err != nil {
		t.Skip("the file system refuses a 250-byte name:", err)
	}
	c := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	set(t, c, "a", "1", -1)
	if err := c.SaveToFile(path); err != nil {
		t.Fatalf("SaveToFile to a valid 250-byte file name: %v", err)
	}
	d := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	if err := d.LoadFromFile(path); err != nil {
		t.Fatal(err)
	}
	if got, want := contents(d), contents(c); !slices.Equal(got, want) {
		t.Fatalf("loaded %v, want %v", got, want)
	}
}

// SaveToFile to a path that is a directory says so (EISDIR). It wrote the
// whole snapshot to a temporary file and then failed with "rename
// <dir>/.<name>.tmp-NNN <path>: file exists", naming a file the caller never
// gave.
func TestSaveToFileDirectoryError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snap")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCache(t, Options{MaxBytes: 64 << 10, Shards: 1})
	set(t, c, "a", "1", -1)
	err := c.SaveToFile(path)
	if err == nil {
		t.Fatal("SaveToFile over a directory succeeded")
	}
	if !errors.Is(err, syscall.EISDIR) && !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("SaveToFile over a directory: %v; want an error saying %s is a directory", err, path)
	}
}
