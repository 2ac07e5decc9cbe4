package sim

import (
	"bytes"
	"slices"
	"testing"
)

// A gzip stream followed by zero padding (written by block and tape tools,
// dd conv=sync), which zcat and gzip -t accept, used to fail the whole
// trace: compress/gzip's multistream mode read the padding as another
// member's header ("unexpected EOF" for 4 bytes, "invalid header" for 512).
// Zero bytes after the last member now end the stream; other bytes there
// stay an error (TestCorruptGzip's "trailing garbage"), and so do zero
// bytes followed by anything else.
func TestGzipZeroPadding(t *testing.T) {
	for _, pad := range []int{4, 512} {
		data := append(gz("1\n2\n"), make([]byte, pad)...)
		keys, err := ReadAll(bytes.NewReader(data))
		if err != nil || !slices.Equal(keys, []uint64{1, 2}) {
			t.Errorf("gzip trace + %d zero bytes of padding: keys %v, err %v; want [1 2] and no error (as zcat/gzip -t)", pad, keys, err)
		}
	}
	garbage := append(append(gz("1\n"), make([]byte, 600)...), 'x')
	if _, err := ReadAll(bytes.NewReader(garbage)); err == nil {
		t.Error("gzip trace + zero bytes + 'x': no error")
	}
}
