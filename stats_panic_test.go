package cachekit

import "testing"

// A Get whose read finds its read buffer stripe full runs a maintenance
// pass; if an OnEvict call of that pass panics (recovered by the caller),
// the hit must still be counted, as an in-place Set's is.
func TestOnEvictPanicInGetCountsHit(t *testing.T) {
	const max = 1 << 15 // a batch of maxWriteBatch records (see writeBatchShare)
	panicNext := false
	c := ctNew(t, Options[int, int]{
		MaxEntries: max,
		Policy:     "lru", // sees every read: the read buffer is in use from the start
		OnEvict: func(k, v int, cause Cause) {
			if panicNext {
				panicNext = false
				panic("callback failed")
			}
		},
	})
	c.Close() // maintenance only on this goroutine
	// Past the bound, with records that no writer's pass applied yet: the
	// next pass evicts.
	for k := range max + 2*maxWriteBatch + 5 {
		c.Set(k, k)
	}
	panicNext = true
	gets, panicked := uint64(0), false
	for !panicked && gets < 10*max {
		func() {
			defer func() { panicked = recover() != nil }()
			gets++
			if _, ok := c.Get(max / 2); !ok {
				t.Fatalf("Get(%d) missed", max/2)
			}
		}()
	}
	if !panicked {
		t.Fatalf("no Get ran a pass whose OnEvict panicked in %d Gets", gets)
	}
	if s := c.Stats(); s.Hits != gets {
		t.Errorf("Stats().Hits = %d after %d Gets that found the key (one of them panicked in OnEvict)", s.Hits, gets)
	}
}

// The same for a Set that replaces a word-sized value in place: its access
// to the entry, finding the stripe full, is queued after a pass, and if an
// OnEvict call of that pass panics, the Set (and its replacement) must
// still be counted.
func TestOnEvictPanicInPlaceSetCountsSet(t *testing.T) {
	const max = 1 << 15 // a batch of maxWriteBatch records (see writeBatchShare)
	panicNext := false
	c := ctNew(t, Options[int, int]{
		MaxEntries: max,
		Policy:     "lru",
		OnEvict: func(k, v int, cause Cause) {
			if panicNext && cause == CauseCapacity {
				panicNext = false
				panic("callback failed")
			}
		},
	})
	c.Close()
	sets := uint64(0)
	for k := range max + 2*maxWriteBatch + 5 {
		c.Set(k, k)
		sets++
	}
	panicNext = true
	inPlace, panicked := uint64(0), false
	for !panicked && inPlace < 10*max {
		func() {
			defer func() { panicked = recover() != nil }()
			inPlace++
			c.Set(max/2, int(inPlace))
		}()
	}
	if !panicked {
		t.Fatalf("no Set ran a pass whose OnEvict panicked in %d Sets", inPlace)
	}
	if s := c.Stats(); s.Sets != sets+inPlace || s.Replaced != inPlace {
		t.Errorf("Stats: Sets %d, Replaced %d after %d Sets, %d of them in place (one panicked in OnEvict); want %d and %d",
			s.Sets, s.Replaced, sets+inPlace, inPlace, sets+inPlace, inPlace)
	}
}
