package bytecache

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/cachekit/cachekit/internal/atomicfile"
)

// Snapshot format, version 1 (all integers little endian):
//
//	file header, 20 bytes:
//	  magic   "CKBYTEC1"
//	  version uint32 (1)
//	  flags   uint32 (0; other values are not readable by this version)
//	  crc     uint32, CRC-32C of the 16 bytes before it
//	blocks, each:
//	  length  uint32, bytes of payload; 0 marks the end block
//	  count   uint32, entries in the payload; in the end block, the
//	          number of entries in all blocks modulo 2^32
//	  crc     uint32, CRC-32C of length, count and payload
//	  payload entries in the ring's layout (see store.go): header with
//	          absolute expiry, key, value
//
// Nothing is read after the end block, so a snapshot may be followed by
// other data in the same stream.

const (
	snapMagic      = "CKBYTEC1"
	snapVersion    = 1
	snapHeaderLen  = 20
	blockHeaderLen = 12
	// saveBatch is the payload size SaveTo aims for per block.
	saveBatch = 256 << 10
	// readStep bounds how much LoadFrom allocates ahead of the bytes it has
	// actually read, so a corrupt length cannot make it allocate much.
	readStep = 1 << 20
	// maxBlockLen bounds a block's payload: a batch plus the largest entry.
	maxBlockLen = saveBatch + maxHeaderLen + maxKeyLimit + maxRingSize
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SaveTo writes a snapshot of the live entries to w, with their absolute
// expiry times, shard by shard and oldest first. It copies a batch of
// entries at a time under a shard's lock and writes without a lock held,
// so the cache stays usable meanwhile; like All it is not an atomic
// snapshot (an entry set or removed during SaveTo may or may not be in it,
// a key set again may be in it twice, the later value last). SaveTo ends
// however fast the cache is written meanwhile: in each shard it follows
// the entries written during its walk for at most one shard's ring of
// bytes, so a snapshot is at most about twice Options.MaxBytes.
//
// SaveTo returns the first error from w, or ErrClosed after Close; a nil w
// is refused with an error.
func (c *Cache) SaveTo(w io.Writer) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if w == nil {
		return errors.New("bytecache: SaveTo: nil io.Writer")
	}
	var hdr [snapHeaderLen]byte
	copy(hdr[:], snapMagic)
	binary.LittleEndian.PutUint32(hdr[8:], snapVersion)
	binary.LittleEndian.PutUint32(hdr[12:], 0)
	binary.LittleEndian.PutUint32(hdr[16:], crc32.Checksum(hdr[:16], castagnoli))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	var (
		buf   []byte
		total uint64
		werr  error
	)
	// Each shard's walk follows the entries written during it for up to
	// one ring's worth of bytes: a key set again before the walk reached
	// its old copy is saved (its new copy), and yet a writer faster than
	// w cannot keep SaveTo going, nor make the snapshot much more than
	// twice the budget.
	c.walk(saveBatch, uint64(c.cf.ringSize), c.nowNano(), &buf, func(b []byte, n int) bool {
		total += uint64(n)
		werr = writeBlock(w, b, uint32(n))
		return werr == nil
	})
	if werr != nil {
		return werr
	}
	if c.closed.Load() {
		// Close emptied the shards not yet walked: the snapshot lacks
		// them, and must not pass for a whole one.
		return ErrClosed
	}
	return writeBlock(w, nil, endCount(total))
}

// endCount is the end block's count for a snapshot of total entries: the
// low 32 bits, so that a snapshot of more than 2^32 entries stays readable.
func endCount(total uint64) uint32 { return uint32(total) }

func writeBlock(w io.Writer, payload []byte, count uint32) error {
	var bh [blockHeaderLen]byte
	binary.LittleEndian.PutUint32(bh[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(bh[4:], count)
	sum := crc32.Update(crc32.Checksum(bh[:8], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(bh[8:], sum)
	if _, err := w.Write(bh[:]); err != nil {
		return err
	}
	if len(payload) > 0 {
		if _, err := w.Write(payload); err != nil {
			return err
		}
	}
	return nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// readErr turns an error from reading a snapshot into the error LoadFrom
// returns: a truncated snapshot is corrupt.
func readErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: truncated in %s: %w", ErrCorrupt, what, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("bytecache: reading snapshot %s: %w", what, err)
}

// readN reads exactly n bytes into buf[:0], growing buf as data arrives.
func readN(r io.Reader, buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		k := min(n-len(buf), readStep)
		buf = slices.Grow(buf, k)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// LoadFrom replaces the cache's content with the entries of a snapshot
// written by SaveTo (by this or another cache, whatever its options). It
// reads the whole snapshot and builds the new content aside before it
// swaps it in, so while it runs the cache keeps serving its old content
// and memory may reach twice the budget; writes made to the cache while
// LoadFrom runs are lost.
//
// Entries that have expired, and entries too large for this cache's
// options, are skipped. The others keep their expiry times (DefaultTTL
// does not apply) and are stored in the order of the snapshot: shard by
// shard of the saving cache, oldest first within each, so they are evicted
// later in that order. If a shard of this cache gets more than its share
// of the budget, the entries stored first in it are evicted, as by Set:
// those of the saving cache's first shards, which are not necessarily the
// oldest. The counters of Stats keep their values.
//
// If the snapshot is malformed, truncated or fails a checksum, LoadFrom
// returns an error wrapping ErrCorrupt and the cache is unchanged; it
// returns other read errors wrapped (also leaving the cache unchanged),
// and ErrClosed after Close; a nil r is refused with an error.
func (c *Cache) LoadFrom(r io.Reader) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if r == nil {
		return errors.New("bytecache: LoadFrom: nil io.Reader")
	}
	var hdr [snapHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return readErr(err, "header")
	}
	if string(hdr[:8]) != snapMagic {
		return corrupt("not a bytecache snapshot")
	}
	if crc32.Checksum(hdr[:16], castagnoli) != binary.LittleEndian.Uint32(hdr[16:]) {
		return corrupt("header checksum mismatch")
	}
	if v, f := binary.LittleEndian.Uint32(hdr[8:]), binary.LittleEndian.Uint32(hdr[12:]); v != snapVersion || f != 0 {
		return corrupt("unsupported snapshot version %d (flags %#x)", v, f)
	}

	stores := make([]store, len(c.shards))
	for i := range stores {
		stores[i] = c.newStore()
	}
	// Release the new chunks unless they are swapped in: on an error, and
	// if r panics (mapped chunks are not the garbage collector's).
	swapped := false
	defer func() {
		if !swapped {
			for i := range stores {
				stores[i].releaseChunks()
			}
		}
	}()
	if err := c.readBlocks(r, stores); err != nil {
		return err
	}
	swapped = true

	for i := range c.shards {
		c.shards[i].mu.Lock()
	}
	defer func() {
		for i := range c.shards {
			c.shards[i].mu.Unlock()
		}
	}()
	closed := c.closed.Load()
	for i := range c.shards {
		if closed {
			stores[i].releaseChunks()
			continue
		}
		st, ns := &c.shards[i].st, &stores[i]
		// Keep positions growing (for iterations in progress) and the
		// counters of Stats.
		ns.head += st.head
		ns.tail += st.head
		ns.st = st.st
		prev := *st
		*st = *ns
		prev.releaseChunks()
	}
	if closed {
		return ErrClosed
	}
	return nil
}

// readBlocks reads a snapshot's blocks, after its header, into stores.
func (c *Cache) readBlocks(r io.Reader, stores []store) error {
	now := lazyNow{fn: c.nowNano}
	now.get()
	var (
		payload []byte
		total   uint64
	)
	for block := 0; ; block++ {
		var bh [blockHeaderLen]byte
		if _, err := io.ReadFull(r, bh[:]); err != nil {
			return readErr(err, fmt.Sprintf("block %d header", block))
		}
		length := binary.LittleEndian.Uint32(bh[0:])
		count := binary.LittleEndian.Uint32(bh[4:])
		if length > maxBlockLen {
			return corrupt("block %d claims %d bytes", block, length)
		}
		var err error
		if payload, err = readN(r, payload, int(length)); err != nil {
			return readErr(err, fmt.Sprintf("block %d", block))
		}
		sum := crc32.Update(crc32.Checksum(bh[:8], castagnoli), castagnoli, payload)
		if sum != binary.LittleEndian.Uint32(bh[8:]) {
			return corrupt("block %d checksum mismatch", block)
		}
		if length == 0 {
			if count != endCount(total) {
				return corrupt("end block counts %d entries, blocks held %d", count, total)
			}
			return nil
		}
		n, err := c.loadBlock(stores, payload, &now)
		if err != nil {
			return corrupt("block %d: %v", block, err)
		}
		if n != int(count) {
			return corrupt("block %d holds %d entries, its header says %d", block, n, count)
		}
		total += uint64(n)
	}
}

// loadBlock parses a block's payload and stores its entries in stores. It
// returns the number of entries parsed.
func (c *Cache) loadBlock(stores []store, b []byte, now *lazyNow) (int, error) {
	n := 0
	for len(b) > 0 {
		h, ok := decodeHeader(b)
		if !ok {
			return n, errors.New("malformed entry header")
		}
		if h.size() > len(b) {
			return n, fmt.Errorf("entry of %d bytes overruns the block", h.size())
		}
		key := b[h.hdrLen : h.hdrLen+h.keyLen]
		value := b[h.hdrLen+h.keyLen : h.size()]
		b = b[h.size():]
		n++
		hv := c.hash.sum(key)
		st := &stores[hv>>c.shift]
		if h.expired(now.get()) || h.keyLen > c.cf.maxKey || h.valLen > c.cf.maxValue ||
			headerLen(h.keyLen, h.valLen, h.hasExp)+h.keyLen+h.valLen > int(c.cf.ringSize) {
			// An entry not loaded (expired, or too large for this cache)
			// may be a later copy of a key set again during SaveTo: the
			// earlier copy, if loaded, is older still and must not come
			// back.
			if slot, _, hd, _ := st.lookup(key, uint32(hv)); slot >= 0 {
				st.drop(slot, &hd)
			}
			continue
		}
		st.set(key, value, uint32(hv), h.exp, h.hasExp, now)
	}
	return n, nil
}

// SaveToFile writes a snapshot to the file at path atomically: to a
// temporary file in the same directory (mode 0600), synced, then renamed
// over path, and the directory synced where the system allows. If path is
// a symbolic link, the file it leads to is replaced and the link kept. On
// error path is left as it was; a path that is a directory is an error
// (syscall.EISDIR) before anything is written. After Close it returns
// ErrClosed and creates no file.
func (c *Cache) SaveToFile(path string) (err error) {
	if c.closed.Load() {
		return ErrClosed
	}
	// Through a symbolic link, the file it leads to is replaced: renamed
	// over, the link itself would become a file beside the old snapshot.
	path, err = atomicfile.Resolve(path)
	if err != nil {
		return err
	}
	if st, serr := os.Stat(path); serr == nil && st.IsDir() {
		return &fs.PathError{Op: "save", Path: path, Err: syscall.EISDIR}
	}
	f, err := atomicfile.CreateTemp(filepath.Dir(path), 0o600)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		// Also on a panic (Options.Now may panic in SaveTo).
		if !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = c.SaveTo(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	renamed = true
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir syncs the directory dir, so that a rename in it survives a
// crash. It is best effort: some systems cannot sync a directory
// (Windows), and the rename, done, is not undone by a failure here.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// LoadFromFile is LoadFrom reading the file at path. After Close it returns
// ErrClosed without opening the file.
func (c *Cache) LoadFromFile(path string) error {
	if c.closed.Load() {
		return ErrClosed
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return c.LoadFrom(bufio.NewReaderSize(f, 1<<20))
}
