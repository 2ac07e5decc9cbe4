package sim

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestLineOfMaxLength(t *testing.T) {
	long := strings.Repeat("k", maxLine)
	for _, tc := range []string{long, long + "\n", long + "\r\n", "1\n" + long + "\n2\n"} {
		keys, err := ReadAll(strings.NewReader(tc))
		if err != nil {
			t.Errorf("line of maxLine=%d bytes (input %d bytes, ending %q): %v", maxLine, len(tc), tc[len(tc)-2:], err)
			continue
		}
		found := false
		for _, k := range keys {
			if k == fnv1a([]byte(long)) {
				found = true
			}
		}
		if !found {
			t.Errorf("long key missing: %v", keys)
		}
	}
}

// failOnce returns data, then err once, then io.EOF: an error that is not
// sticky (a timeout, say).
type failOnce struct {
	data   []byte
	err    error
	failed bool
}

func (f *failOnce) Read(p []byte) (int, error) {
	if len(f.data) > 0 {
		n := copy(p, f.data)
		f.data = f.data[n:]
		return n, nil
	}
	if !f.failed {
		f.failed = true
		return 0, f.err
	}
	return 0, io.EOF
}

// A read error within the first two bytes of a source is swallowed by the
// gzip sniffing (bufio.Reader.Peek returns it and forgets it), so the cut
// line is handed out as a key and Err reports nothing.
func TestErrorInFirstBytesIsReported(t *testing.T) {
	errDisk := errors.New("disk on fire")
	r := NewReader(&failOnce{data: []byte("7"), err: errDisk})
	var keys []uint64
	for k := range r.All() {
		keys = append(keys, k)
	}
	if len(keys) != 0 || !errors.Is(r.Err(), errDisk) {
		t.Fatalf("keys %v, error %v; want no keys and %v", keys, r.Err(), errDisk)
	}
}

// A byte order mark at the start of each file is skipped, so a file saved
// with one reads as the same keys (its first line a number, not a hashed
// string); one elsewhere is part of its line.
func TestByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	a := dir + "/a.txt"
	b := dir + "/b.txt"
	if err := os.WriteFile(a, []byte("\ufeff1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("\ufeff 3\n\ufeff4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(a, b)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var keys []uint64
	for k := range r.All() {
		keys = append(keys, k)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []uint64{1, 2, 3, ParseKey([]byte("\ufeff4"))}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys %v; want %v", keys, want)
	}
}
