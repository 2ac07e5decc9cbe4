package sim

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
)

// maxLine is the longest line a trace may have.
const maxLine = 1 << 20

// Reader streams the keys of a trace: text with one key per line, plain or
// gzipped (recognised by the gzip magic bytes, not by a file name; a gzip
// stream may hold several members, and zero bytes after the last one are
// padding, as gzip(1) takes them). Leading and trailing white space is
// ignored and blank lines are skipped, as is a UTF-8 byte order mark at
// the start of a file (which editors on Windows write). A line longer than
// 1 MiB ends the trace with an error (bufio.ErrTooLong), as does a file
// cut short inside its gzip stream, or one that is a single byte 0x1f (the
// start of gzip's magic). A line holding a decimal integer
// (optionally signed) that fits in an int64 or a uint64 is that number as a
// key (a negative number as its two's complement); any other line is hashed
// with FNV-1a (64 bits) to a key, so every run sees the same keys. See
// ParseKey.
//
// A Reader built by Open reads several files one after another as one
// trace. Read keys with Next or All, then check Err.
type Reader struct {
	srcs  []source // sources not yet started
	cur   *bufio.Scanner
	gz    *gzip.Reader // the current source's decompressor, or nil
	name  string       // the current source's name, for errors
	first bool         // the current source's first line is next
	files []*os.File   // opened by Open, closed by Close
	err   error
}

type source struct {
	name string
	r    io.Reader
}

// NewReader returns a Reader of the trace in r. If r is nil, the Reader
// reads no key and Err reports the nil io.Reader.
func NewReader(r io.Reader) *Reader {
	if r == nil {
		return &Reader{err: errors.New("trace: nil io.Reader")}
	}
	return &Reader{srcs: []source{{"trace", r}}}
}

// Open returns a Reader of the named files, read in order as one trace.
// It opens every file at once, so a missing file is reported here. The
// caller must Close the Reader.
func Open(paths ...string) (*Reader, error) {
	r := &Reader{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.files = append(r.files, f)
		r.srcs = append(r.srcs, source{p, f})
	}
	return r, nil
}

// Next returns the next key. It returns false at the end of the trace or
// on an error, which Err then reports.
func (r *Reader) Next() (key uint64, ok bool) {
	for r.err == nil {
		if r.cur == nil {
			if len(r.srcs) == 0 {
				return 0, false
			}
			r.start(r.srcs[0])
			r.srcs = r.srcs[1:]
			continue
		}
		if !r.cur.Scan() {
			if err := r.cur.Err(); err != nil {
				r.fail(err)
			}
			r.cur = nil
			continue
		}
		raw := r.cur.Bytes()
		if len(raw) > maxLine {
			r.fail(bufio.ErrTooLong)
			continue
		}
		if r.first {
			r.first = false
			raw = bytes.TrimPrefix(raw, byteOrderMark)
		}
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		return ParseKey(line), true
	}
	return 0, false
}

// byteOrderMark is U+FEFF in UTF-8, which some editors put at the start
// of a text file.
var byteOrderMark = []byte("\xef\xbb\xbf")

// start begins reading src, through a gzip reader if it starts with the
// gzip magic bytes.
func (r *Reader) start(src source) {
	r.name = src.name
	r.first = true
	br := bufio.NewReaderSize(src.r, 64<<10)
	var in io.Reader = br
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		// Peek hands the read error out once and forgets it.
		r.fail(err)
		return
	}
	if len(magic) == 1 && magic[0] == 0x1f {
		// The whole source is the first byte of gzip's magic: a gzip
		// file cut short, not a trace of one key.
		r.fail(fmt.Errorf("gzip: %w", io.ErrUnexpectedEOF))
		return
	}
	if isGzip(magic) {
		if r.gz == nil {
			r.gz = new(gzip.Reader)
		}
		m := &members{gz: r.gz, br: br}
		if err := m.member(); err != nil {
			r.fail(err)
			return
		}
		in = m
	}
	trap := &readErr{r: in}
	r.cur = bufio.NewScanner(trap)
	// Room for the line, its "\r\n", and the byte past them that tells
	// the Scanner the line has ended; Next enforces maxLine itself.
	r.cur.Buffer(make([]byte, 64<<10), maxLine+len("\r\n")+1)
	r.cur.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		// A Scanner takes a read error for the end of its input, and
		// would return the line it was reading as the last one: a key
		// that is not in the trace when the input was cut (a truncated
		// gzip stream). Report the error instead.
		if atEOF && trap.err != nil && bytes.IndexByte(data, '\n') < 0 {
			return 0, nil, trap.err
		}
		return bufio.ScanLines(data, atEOF)
	})
}

// members reads the members of a gzip stream one after another, as
// gzip(1) does: zero bytes after the last member are padding (block and
// tape tools write it) and end the stream; other bytes there are an error.
type members struct {
	gz   *gzip.Reader // reading one member (Multistream false)
	br   *bufio.Reader
	done bool
}

// errTrailingGarbage is the error for bytes after a gzip stream's last
// member that are neither another member nor zero padding.
var errTrailingGarbage = errors.New("gzip: trailing garbage after the compressed data")

func (m *members) Read(p []byte) (int, error) {
	for !m.done {
		n, err := m.gz.Read(p)
		if err != io.EOF {
			return n, err
		}
		if n > 0 {
			return n, nil // the member's end comes again on the next Read
		}
		if err := m.next(); err != nil {
			m.done = err == io.EOF
			return 0, err
		}
	}
	return 0, io.EOF
}

// isGzip reports whether b starts with the gzip magic bytes.
func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// member starts reading the gzip member at m.br's position.
func (m *members) member() error {
	if err := m.gz.Reset(m.br); err != nil {
		return err
	}
	m.gz.Multistream(false)
	return nil
}

// next starts the member after the one that ended, or returns io.EOF if
// only zero bytes (or none) follow it.
func (m *members) next() error {
	magic, err := m.br.Peek(2)
	switch {
	case isGzip(magic):
		return m.member()
	case err != nil && err != io.EOF:
		return err
	}
	var buf [4096]byte
	for {
		n, err := m.br.Read(buf[:])
		for _, b := range buf[:n] {
			if b != 0 {
				return errTrailingGarbage
			}
		}
		if err != nil {
			return err // io.EOF: padding only
		}
	}
}

// readErr remembers the error, other than io.EOF, that a read of r returned.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

func (r *Reader) fail(err error) {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // a gzip stream cut short
	}
	r.err = fmt.Errorf("%s: %w", r.name, err)
	r.cur = nil
}

// All returns an iterator over the remaining keys, for a range loop. After
// the loop, check Err.
func (r *Reader) All() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for {
			k, ok := r.Next()
			if !ok || !yield(k) {
				return
			}
		}
	}
}

// Err returns the first error met while reading (which names the file), or
// nil. A corrupt or truncated gzip stream is an error.
func (r *Reader) Err() error { return r.err }

// Close closes the files that Open opened. It does not close the
// io.Reader given to NewReader.
func (r *Reader) Close() error {
	var errs []error
	for _, f := range r.files {
		errs = append(errs, f.Close())
	}
	r.files = nil
	r.srcs = nil
	r.cur = nil
	return errors.Join(errs...)
}

// ReadAll reads every key of the trace in r.
func ReadAll(r io.Reader) ([]uint64, error) {
	return readAll(NewReader(r))
}

// Load reads every key of the named files, read in order as one trace.
// 20 million keys take 160 MB.
func Load(paths ...string) ([]uint64, error) {
	r, err := Open(paths...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAll(r)
}

func readAll(r *Reader) ([]uint64, error) {
	keys := make([]uint64, 0, 1<<16)
	for k, ok := r.Next(); ok; k, ok = r.Next() {
		keys = append(keys, k)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return keys, nil
}

// ParseKey returns the key of a trace line, which the caller has trimmed
// of surrounding white space (Reader does; white space left in is part of
// a text key, so " 42 " is hashed, not 42): the number itself for a
// decimal integer with an optional sign that fits in a uint64
// (non-negative) or an int64 (negative, taken as its two's complement, so
// "-1" is math.MaxUint64), and the FNV-1a 64-bit hash of the line
// otherwise. Text keys may therefore, very rarely, collide with each other
// or with numeric keys.
func ParseKey(line []byte) uint64 {
	if k, ok := parseInt(line); ok {
		return k
	}
	return fnv1a(line)
}

func parseInt(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d := uint64(c) - '0'
		if d > 9 || v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -v, true
	}
	return v, true
}

func fnv1a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
