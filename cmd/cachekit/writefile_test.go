package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cachekit/cachekit/internal/atomicfile"
)

// atomicfile.WriteFile (--json of load, -chart of sim) replaces a file by
// renaming a new one over it. Through a symbolic link, it replaced the link
// by a regular file and left the file it pointed to as it was.
func TestWriteFileAtomicThroughLink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(real)
	st, err := os.Lstat(link)
	if err != nil || st.Mode()&os.ModeSymlink == 0 || string(b) != "new" {
		t.Errorf("after writing through a link: the link's mode %v (%v), the file it pointed to holds %q; want a link still, and %q",
			st.Mode(), err, b, "new")
	}
}

// A file replaced keeps its permissions (a report kept private, 0600,
// became 0644).
func TestWriteFileAtomicKeepsMode(t *testing.T) {
	name := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteFile(name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(name); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v) after replacing a 0600 file, want 0600", st.Mode().Perm(), err)
	}
}

// A name that is not a regular file, a pipe or a device (--json
// /dev/stdout, /dev/null), has nothing to replace: it is written to. The
// rename replaced it by a regular file (run as root, --json /dev/stdout
// replaced the system's /dev/stdout link by a file); here, a named pipe.
func TestWriteFileAtomicToPipe(t *testing.T) {
	name := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skip("no named pipes:", err)
	}
	r, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := atomicfile.CheckWritable(name); err != nil {
		t.Errorf("atomicfile.CheckWritable: %v", err)
	}
	werr := atomicfile.WriteFile(name, []byte("report"))
	st, err := os.Lstat(name)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after writing to a named pipe (error %v): its mode is %v (%v), want a named pipe still", werr, st.Mode(), err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	b := make([]byte, 64)
	n, _ := r.Read(b)
	if got := string(b[:n]); got != "report" {
		t.Errorf("read %q from the pipe, want %q", got, "report")
	}
}
