package bytecache

import "fmt"

// Test hooks.

// forceCollisions makes the cache keep only the hash bits in mask, so keys
// collide at will: mask 0 gives every key the same 64-bit hash. Call it
// before storing anything.
func (c *Cache) forceCollisions(mask uint64) {
	c.hash.mask = mask
	for i := range c.shards {
		c.shards[i].st.hash.mask = mask
	}
}

// onHeap keeps the chunks on the Go heap.
func onHeap(o Options) Options {
	o.heap = true
	return o
}

// withChunkShift sets the chunk size to 1<<shift bytes, so that entries
// straddle chunks in small tests.
func withChunkShift(o Options, shift uint32) Options {
	o.chunkShift = shift
	return o
}

// chunkCapacity sums the capacity of the allocated chunks, measured from the
// chunks themselves rather than from the counters.
func (c *Cache) chunkCapacity() int64 {
	var n int64
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		for _, ch := range sh.st.chunks {
			n += int64(cap(ch))
		}
		sh.mu.RUnlock()
	}
	return n
}

// check verifies every shard's invariants: the ring between tail and head
// is a sequence of well-formed entries, the index holds exactly the live
// ones (each slot points at an entry boundary whose key has the slot's tag
// and lives in the right shard, no key twice), and the counters agree.
func (c *Cache) check() error {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		err := c.checkShard(i, &sh.st)
		sh.mu.RUnlock()
		if err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return nil
}

func (c *Cache) checkShard(idx int, s *store) error {
	if s.head-s.tail > uint64(s.ringSize) {
		return fmt.Errorf("head-tail = %d > ring %d", s.head-s.tail, s.ringSize)
	}
	var alloc int64
	for _, ch := range s.chunks {
		alloc += int64(cap(ch))
	}
	if alloc != s.allocBytes || alloc > int64(s.ringSize) {
		return fmt.Errorf("chunks hold %d bytes, counter %d, ring %d", alloc, s.allocBytes, s.ringSize)
	}
	sizes := map[uint32]header{} // entry boundaries
	off := s.tailOff
	for pos := s.tail; pos < s.head; {
		h := s.header(off)
		if h.size() <= 0 || pos+uint64(h.size()) > s.head {
			return fmt.Errorf("entry at %d (offset %d) of %d bytes overruns head %d", pos, off, h.size(), s.head)
		}
		sizes[off] = h
		pos += uint64(h.size())
		off = s.advance(off, h.size())
	}
	if off != s.headOff {
		return fmt.Errorf("walk ends at offset %d, head offset %d", off, s.headOff)
	}
	n, ttl := 0, 0
	var live int64
	keys := map[string]bool{}
	for slot, e := range s.table {
		if e == 0 {
			continue
		}
		n++
		h, ok := sizes[slotOff(e)]
		if !ok {
			return fmt.Errorf("slot %d points at offset %d, not an entry", slot, slotOff(e))
		}
		key := s.appendAt(nil, s.advance(slotOff(e), h.hdrLen), h.keyLen)
		hv := c.hash.sum(key)
		if uint32(hv) != slotTag(e) || int(hv>>c.shift) != idx {
			return fmt.Errorf("slot %d: key %q has hash %#x, tag %#x, shard %d", slot, key, hv, slotTag(e), idx)
		}
		if keys[string(key)] {
			return fmt.Errorf("key %q indexed twice", key)
		}
		keys[string(key)] = true
		if got, _, _, _ := s.lookup(key, slotTag(e)); got != slot {
			return fmt.Errorf("key %q in slot %d, lookup finds slot %d", key, slot, got)
		}
		live += int64(h.size())
		if h.hasExp {
			ttl++
			if h.exp < s.minExp {
				return fmt.Errorf("key %q expires at %d, before minExp %d", key, h.exp, s.minExp)
			}
		}
	}
	if ttl != s.ttlLive || ttl == 0 && s.minExp != noExpiry {
		return fmt.Errorf("%d live entries with a TTL, counter %d, minExp %d", ttl, s.ttlLive, s.minExp)
	}
	if n != s.count {
		return fmt.Errorf("%d slots used, count %d", n, s.count)
	}
	if l := len(s.table); l > 0 && (n*4 > l*3 || l > minTableSize && n*8 < l) {
		return fmt.Errorf("%d entries in a table of %d slots (doubled at 3/4 full, halved at 1/8)", n, l)
	}
	if live != s.liveBytes {
		return fmt.Errorf("live entries hold %d bytes, counter %d", live, s.liveBytes)
	}
	return nil
}
