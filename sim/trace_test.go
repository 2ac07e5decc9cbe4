package sim

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	for _, c := range []struct {
		line string
		want uint64
	}{
		{"0", 0},
		{"42", 42},
		{"007", 7},
		{"+7", 7},
		{"-0", 0},
		{"-1", math.MaxUint64},
		{"-42", uint64(math.MaxUint64 - 41)},
		{"9223372036854775807", math.MaxInt64},
		{"-9223372036854775808", 1 << 63},
		{"18446744073709551615", math.MaxUint64},
		// Not integers of 64 bits: hashed.
		{"18446744073709551616", fnv1a([]byte("18446744073709551616"))},
		{"-9223372036854775809", fnv1a([]byte("-9223372036854775809"))},
		{"1.5", fnv1a([]byte("1.5"))},
		{"-", fnv1a([]byte("-"))},
		{"12ab", fnv1a([]byte("12ab"))},
		{"a", 0xaf63dc4c8601ec8c},      // FNV-1a test vectors
		{"foobar", 0x85944171f73967e8}, //
	} {
		if got := ParseKey([]byte(c.line)); got != c.want {
			t.Errorf("ParseKey(%q) = %d, want %d", c.line, got, c.want)
		}
	}
}

// traceText exercises every rule of the format; traceKeys are its keys.
const traceText = "1\n  2  \n\n-3\r\n\t\nhello world\n18446744073709551615\n   \nhello world\nlast-line-without-newline"

var traceKeys = []uint64{1, 2, math.MaxUint64 - 2, fnv1a([]byte("hello world")), math.MaxUint64,
	fnv1a([]byte("hello world")), fnv1a([]byte("last-line-without-newline"))}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadAll(t *testing.T) {
	twoMembers := append(gzipped(t, "1\n2\n"), gzipped(t, "3\n")...)
	for _, c := range []struct {
		name string
		data []byte
		want []uint64
	}{
		{"plain", []byte(traceText), traceKeys},
		{"gzip", gzipped(t, traceText), traceKeys},
		{"gzip of two members", twoMembers, []uint64{1, 2, 3}},
		{"empty", nil, []uint64{}},
		{"empty gzip", gzipped(t, ""), []uint64{}},
		{"one byte", []byte("7"), []uint64{7}},
		{"magic-like plain text", []byte("\x1f\n5\n"), []uint64{fnv1a([]byte("\x1f")), 5}},
	} {
		got, err := ReadAll(bytes.NewReader(c.data))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: keys %v, want %v", c.name, got, c.want)
		}
	}
}

func TestLoadDetectsGzipByContent(t *testing.T) {
	// Names that lie about the content: detection goes by the magic bytes.
	gz := writeFile(t, "plain.txt", gzipped(t, "1\n2\n"))
	plain := writeFile(t, "packed.txt.gz", []byte("3\nkey\n"))
	got, err := Load(gz, plain, gz)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 2, 3, fnv1a([]byte("key")), 1, 2}; !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
}

func TestReaderStreams(t *testing.T) {
	a := writeFile(t, "a.gz", gzipped(t, "1\n2\n3\n"))
	b := writeFile(t, "b", []byte("4\n5\n"))
	r, err := Open(a, b)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []uint64
	for k := range r.All() {
		got = append(got, k)
		if k == 4 {
			break // All stops early without losing keys
		}
	}
	for k := range r.All() {
		got = append(got, k)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptGzip(t *testing.T) {
	var long strings.Builder
	for i := range 10000 {
		long.WriteString(strings.Repeat("x", i%7) + "\n")
	}
	good := gzipped(t, long.String())
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	badCRC := slices.Clone(good)
	badCRC[len(badCRC)-8] ^= 1 // the CRC-32 in the trailer
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"flipped byte", flipped},
		{"bad checksum", badCRC},
		{"truncated", good[:len(good)/2]},
		{"truncated trailer", good[:len(good)-3]},
		{"magic only", []byte{0x1f, 0x8b}},
		{"bad header", []byte{0x1f, 0x8b, 0x99, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"trailing garbage", append(slices.Clone(good), "garbage"...)},
	} {
		path := writeFile(t, "corrupt.gz", c.data)
		keys, err := Load(path)
		if err == nil {
			t.Errorf("%s: no error, %d keys", c.name, len(keys))
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", c.name, err)
		}
		t.Logf("%s: %v", c.name, err)
		// The streaming reader reports it too, after the keys before it.
		r := NewReader(bytes.NewReader(c.data))
		for range r.All() {
		}
		if r.Err() == nil {
			t.Errorf("%s: the Reader reports no error", c.name)
		}
	}
}

// failAfter returns data, then err.
type failAfter struct {
	data []byte
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// An input cut in the middle of a line (a truncated gzip stream, a failed
// read) ends the keys with an error: the part of the line read is not
// handed out as a key.
func TestCutLineIsNoKey(t *testing.T) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte(strings.Repeat("1234567890123\n", 100)))
	zw.Close()
	// The gzip header (10 bytes), a stored block's (5), 3 lines and 7
	// bytes of the 4th.
	cut := b.Bytes()[:10+5+14*3+7]
	readErr := errors.New("disk on fire")
	for _, c := range []struct {
		name string
		in   io.Reader
		err  error
	}{
		{"truncated gzip", bytes.NewReader(cut), io.ErrUnexpectedEOF},
		{"failed read", &failAfter{[]byte("1\n2\n345"), readErr}, readErr},
	} {
		r := NewReader(c.in)
		var keys []uint64
		for k := range r.All() {
			keys = append(keys, k)
		}
		want := []uint64{1234567890123, 1234567890123, 1234567890123}
		if c.name == "failed read" {
			want = []uint64{1, 2}
		}
		if !slices.Equal(keys, want) || !errors.Is(r.Err(), c.err) {
			t.Errorf("%s: keys %v, error %v; want %v and %v", c.name, keys, r.Err(), want, c.err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	ok := writeFile(t, "ok", []byte("1\n"))
	_, err := Load(ok, filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v, want a missing file", err)
	}
}

func TestLineTooLong(t *testing.T) {
	_, err := ReadAll(strings.NewReader("1\n" + strings.Repeat("k", maxLine+1) + "\n"))
	if err == nil {
		t.Fatal("a line over the limit was accepted")
	}
}
