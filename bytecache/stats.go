package bytecache

// Stats are a cache's counters and sizes. The counters only grow (Clear and
// LoadFrom keep them); the figures are summed shard by shard, so under
// concurrent use they are approximate.
type Stats struct {
	Hits        uint64 // Get calls that returned a value
	Misses      uint64 // Get calls that did not
	Sets        uint64 // entries stored by Set
	Deletes     uint64 // live entries removed by Delete
	Evictions   uint64 // live entries dropped by the ring wrapping over them
	Expirations uint64 // entries found expired and removed (by Get, Delete, Len or the ring; not by Has)
	Collisions  uint64 // keys compared in full that differed from the key sought though their hashes matched in 32 bits, each counted once per Get, Has, Set or Delete

	Entries   uint64 // entries in the index: live ones and expired ones not yet removed
	BytesUsed int64  // bytes of the rings between tail and head: live entries and overwritten, deleted or expired ones not yet reclaimed
	BytesLive int64  // bytes of the entries in the index (headers, keys and values): live ones and expired ones not yet removed
	BytesMax  int64  // the budget: Options.MaxBytes rounded down to a multiple of Shards

	// ChunkBytes is the memory allocated for chunks, at most BytesMax.
	ChunkBytes int64
	// IndexBytes is the memory of the indexes: 8 bytes per slot.
	IndexBytes int64
}

// Stats returns the cache's counters and sizes.
func (c *Cache) Stats() Stats {
	var s Stats
	for i := range c.shards {
		sh := &c.shards[i]
		s.Hits += sh.hits.Load()
		s.Misses += sh.misses.Load()
		s.Collisions += sh.collisions.Load()
		sh.mu.RLock()
		st := &sh.st
		s.Sets += st.st.sets
		s.Deletes += st.st.deletes
		s.Evictions += st.st.evictions
		s.Expirations += st.st.expirations
		s.Entries += uint64(st.count)
		s.BytesUsed += int64(st.head - st.tail)
		s.BytesLive += st.liveBytes
		s.ChunkBytes += st.allocBytes
		s.IndexBytes += 8 * int64(len(st.table))
		sh.mu.RUnlock()
	}
	s.BytesMax = int64(c.cf.ringSize) * int64(len(c.shards))
	return s
}
