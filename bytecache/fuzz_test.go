package bytecache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The model test drives a small cache (tiny rings and chunks, so entries
// straddle chunks and the ring wraps many times) with operations decoded
// from bytes, and checks it against a map. The cache may lose any entry
// (eviction) but must never return a value other than the last one set, an
// entry that was deleted or has expired, or miss an entry it just stored.

type modelEntry struct {
	value []byte
	exp   int64 // 0: never
}

type byteSource struct {
	b []byte
}

func (s *byteSource) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	x := s.b[0]
	s.b = s.b[1:]
	return x
}

func (s *byteSource) u16() int { return int(s.next())<<8 | int(s.next()) }

// modelKey returns a key of the given identity and length.
func modelKey(id byte, n int) []byte {
	k := bytes.Repeat([]byte{'a' + id%8}, n)
	return k
}

// modelValue returns n bytes that depend on seq (no two Sets write the
// same value unless empty).
func modelValue(seq uint32, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(seq>>((i%4)*8)) ^ byte(i*31)
	}
	return v
}

func runModel(t *testing.T, data []byte) {
	src := &byteSource{b: data}
	clk := newClock()
	shards := 1 << (src.next() % 3)
	ring := 1024 + 256*int(src.next()%29) // 1 KiB .. 8 KiB
	shift := uint32(4 + src.next()%9)     // 16 B .. 4 KiB chunks
	opts := withChunkShift(Options{
		MaxBytes: int64(ring * shards),
		Shards:   shards,
		Now:      clk.Now,
	}, shift)
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	switch src.next() % 4 {
	case 1:
		c.forceCollisions(0) // every key has the same hash
	case 2:
		c.forceCollisions(0x3 | 3<<62) // few distinct hashes, all shards
	}
	model := map[string]modelEntry{}
	now := func() int64 { return clk.ns.Load() }
	var seq uint32
	var dst []byte

	check := func(key []byte, got []byte, ok bool, what string) {
		t.Helper()
		m, in := model[string(key)]
		live := in && (m.exp == 0 || m.exp > now())
		if ok && !live {
			t.Fatalf("%s(%q) returned %d bytes; the model has no live entry (in=%v)", what, key, len(got), in)
		}
		if ok && got != nil && !bytes.Equal(got, m.value) {
			t.Fatalf("%s(%q) returned a wrong value (%d bytes, want %d)", what, key, len(got), len(m.value))
		}
	}

	for ops := 0; len(src.b) > 0; ops++ {
		op := src.next()
		klen := int(src.next())
		if klen >= 240 {
			klen = (klen - 240) * 97
		} else {
			klen %= 24
		}
		key := modelKey(op>>4, klen)
		switch op % 8 {
		case 0, 1, 2: // Set
			// Sizes from 0 to the largest, mostly small so that many
			// entries share a ring.
			var vlen int
			switch r := src.u16(); src.next() % 16 {
			case 0:
				vlen = r % (c.cf.maxValue + 1)
			case 1:
				vlen = max(0, c.cf.maxValue-r%64)
			case 2, 3, 4:
				vlen = r % (ring / 8)
			default:
				vlen = r % 48
			}
			var ttl time.Duration = -1
			if t := src.next(); t < 64 {
				ttl = time.Duration(t%8+1) * time.Millisecond
			}
			seq++
			v := modelValue(seq, vlen)
			err := c.Set(key, v, ttl)
			fits := klen <= c.cf.maxKey && vlen <= c.cf.maxValue &&
				headerLen(klen, vlen, ttl > 0)+klen+vlen <= ring
			if fits != (err == nil) {
				t.Fatalf("Set(%d-byte key, %d-byte value) = %v; ring %d", klen, vlen, err, ring)
			}
			if err != nil {
				if !errors.Is(err, ErrValueTooLarge) && !errors.Is(err, ErrKeyTooLarge) {
					t.Fatal(err)
				}
				break
			}
			for i := range v {
				v[i] ^= 0xff
			}
			e := modelEntry{value: modelValue(seq, vlen)}
			if ttl > 0 {
				e.exp = now() + int64(ttl)
			}
			model[string(key)] = e
			got, ok := c.Get(nil, key)
			if !ok {
				t.Fatalf("op %d: entry just set (%d-byte key, %d-byte value) is missing", ops, klen, vlen)
			}
			check(key, got, ok, "Get")
		case 3, 4: // Get
			var ok bool
			dst, ok = c.Get(dst[:0], key)
			check(key, dst, ok, "Get")
		case 5: // Delete or Has
			if src.next()%2 == 0 {
				check(key, nil, c.Has(key), "Has")
				break
			}
			m, in := model[string(key)]
			live := in && (m.exp == 0 || m.exp > now())
			if c.Delete(key) && !live {
				t.Fatalf("Delete(%q) reported a live entry the model does not have", key)
			}
			delete(model, string(key))
		case 6: // time passes
			clk.Advance(time.Duration(src.next()%5) * time.Millisecond)
		case 7: // whole-cache operations
			switch src.next() % 32 {
			case 0:
				c.Clear()
				clear(model)
			case 1, 2, 3:
				var buf bytes.Buffer
				if err := c.SaveTo(&buf); err != nil {
					t.Fatal(err)
				}
				if err := c.LoadFrom(&buf); err != nil {
					t.Fatal(err)
				}
			default:
				n := 0
				for e := range c.All() {
					check(e.Key, e.Value, true, "All")
					n++
				}
				if l := c.Len(); l != n {
					t.Fatalf("Len %d, All yields %d", l, n)
				}
			}
		}
	}
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	if modelStats != nil {
		s := c.Stats()
		var wraps uint64
		for i := range c.shards {
			wraps += c.shards[i].st.head / uint64(ring)
		}
		modelStats(s, wraps)
	}
	if got, max := c.chunkCapacity(), int64(ring*shards); got > max {
		t.Fatalf("chunks hold %d bytes, budget %d", got, max)
	}
	live := 0
	for _, m := range model {
		if m.exp == 0 || m.exp > now() {
			live++
		}
	}
	if n := c.Len(); n > live {
		t.Fatalf("Len %d > %d live entries in the model", n, live)
	}
}

// modelStats, if set, receives the stats and the total number of ring
// wraps at the end of runModel.
var modelStats func(s Stats, wraps uint64)

func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte("\x02\x05\x03\x01\x00\x05\x10\x02\x00\x40\x03\x05"))
	f.Fuzz(func(t *testing.T, data []byte) {
		runModel(t, data[:min(len(data), 8<<10)]) // longer inputs slow the fuzzer down
	})
}

// TestModelRandom runs the model test on long random inputs: thousands of
// operations, many wraps of each ring.
func TestModelRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	n := 8
	if testing.Short() {
		n = 2
	}
	for i := range n {
		data := make([]byte, 20000)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		var st Stats
		var wraps uint64
		modelStats = func(s Stats, w uint64) { st, wraps = s, w }
		t.Run(fmt.Sprint(i), func(t *testing.T) { runModel(t, data) })
		modelStats = nil
		t.Logf("run %d: %d ring wraps, %+v", i, wraps, st)
		// The input must exercise what the test is for.
		if wraps < 10 || st.Hits == 0 || st.Evictions == 0 {
			t.Errorf("run %d exercised too little: %d wraps, %+v", i, wraps, st)
		}
	}
}

// FuzzLoad wraps arbitrary bytes in a snapshot block with a valid checksum,
// so that the entry parser itself is fuzzed: LoadFrom must either load the
// entries or return ErrCorrupt with the cache unchanged, and never panic.
func FuzzLoad(f *testing.F) {
	f.Add([]byte{}, uint32(0))
	f.Add([]byte{0x06, 0x01, 'k', 'e', 'y', 'v'}, uint32(1))
	f.Add([]byte{0x07, 0x01, 1, 2, 3, 4, 5, 6, 7, 0x7f, 'k', 'e', 'y', 'v'}, uint32(1))
	f.Add([]byte{0x80, 0x80, 0x04, 0x00}, uint32(1))
	f.Add([]byte{0x02, 0xff, 0xff, 0xff, 0xff, 0x0f, 'k'}, uint32(1))
	f.Fuzz(func(t *testing.T, payload []byte, count uint32) {
		clk := newClock()
		c, err := New(withChunkShift(Options{MaxBytes: 8 << 10, Shards: 2, Now: clk.Now}, 8))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		set(t, c, "existing", "value", -1)
		before := contents(c)

		var snap bytes.Buffer
		hdr := make([]byte, 0, snapHeaderLen)
		hdr = append(hdr, snapMagic...)
		hdr = binary.LittleEndian.AppendUint32(hdr, snapVersion)
		hdr = binary.LittleEndian.AppendUint32(hdr, 0)
		hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(hdr, castagnoli))
		snap.Write(hdr)
		if len(payload) > 0 {
			writeBlock(&snap, payload, count)
		}
		writeBlock(&snap, nil, count)

		err = c.LoadFrom(&snap)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("LoadFrom: %v, want ErrCorrupt", err)
			}
			if got := contents(c); !slices.Equal(got, before) {
				t.Fatalf("a refused snapshot changed the cache: %v", got)
			}
		}
		if err := c.check(); err != nil {
			t.Fatal(err)
		}
	})
}
