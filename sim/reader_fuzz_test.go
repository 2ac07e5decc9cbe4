package sim

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"testing"
)

// naiveKeys is the reader's specification, the simplest way: every
// non-blank line, trimmed, is a key.
func naiveKeys(s string) []uint64 {
	s = strings.TrimPrefix(s, "\ufeff") // a byte order mark opens the file
	out := []uint64{}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSuffix(l, "\r")
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		out = append(out, ParseKey([]byte(l)))
	}
	return out
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// FuzzReaderMatchesNaive checks that the reader reads plain text, gzip and
// two concatenated gzip members as naiveKeys does.
func FuzzReaderMatchesNaive(f *testing.F) {
	f.Add("1\n2\r\n\n 007 \n-1\n18446744073709551616\n")
	f.Add("a\rb\r\n")
	f.Add("\ufeff1\n\ufeff2\n")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 || (len(s) >= 2 && s[0] == 0x1f && s[1] == 0x8b) {
			return
		}
		want := naiveKeys(s)
		got, err := ReadAll(strings.NewReader(s))
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("plain %q: %v %v want %v", s, got, err, want)
		}
		got, err = ReadAll(bytes.NewReader(gz(s)))
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("gz %q: %v %v want %v", s, got, err, want)
		}
		// split into two members at the middle
		h := len(s) / 2
		two := append(gz(s[:h]), gz(s[h:])...)
		got, err = ReadAll(bytes.NewReader(two))
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("gz2 %q: %v %v want %v", s, got, err, want)
		}
	})
}
