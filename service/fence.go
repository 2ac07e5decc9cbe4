package service

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// fence keeps a fill from the second tier from overwriting a newer write.
//
// A read that misses the in-memory store asks the Tier, then stores what
// it got. Meanwhile a PUT or DELETE on this instance, or an invalidation
// from another one, may have changed the key: storing the value read
// before that would put an old value back, and keep it for its whole TTL.
// So every change of a key bumps a generation in the key's stripe, and a
// fill stores its value only if the generation it saw before reading the
// in-memory store (not merely before asking the Tier: a write whose Tier
// part failed leaves the Tier's older value there) is still current,
// checked and stored under the stripe's lock. A
// change that lands in between makes the fill skip the store (the value is
// still served to its reader, who asked before the change completed).
//
// A change made here also writes the Tier, after its in-memory change: a
// fill that starts between the two reads the Tier's old value with the new
// generation. So such a change is open from its in-memory change (open)
// to the end of its Tier write (close), and no fill stores while a change
// of its stripe is open. Changes of one key also run one at a time, so
// that their Tier writes land in the order of their in-memory changes;
// changes of other keys of the stripe do not wait for them (a Tier that
// hangs would make each wait for the others' TierTimeouts in turn).
//
// Stripes are shared by many keys, so an unrelated change can also make a
// fill skip caching; that costs a later Tier read, never a wrong value.
type fence struct {
	seed    maphash.Seed
	stripes [fenceStripes]fenceStripe
}

const fenceStripes = 1024

type fenceStripe struct {
	mu  sync.Mutex
	gen atomic.Uint64 // changed under mu; begin reads it without
	// writing holds, under mu, the keys of the changes from open to
	// close (their Tier write has not ended), each with a channel closed
	// at its close. No fill stores while it is not empty, and changes of
	// one key run one at a time, so that the store and the Tier end with
	// the same last write (this instance ignores its own invalidations,
	// so nothing would mend a Tier write that lands out of order).
	writing map[string]chan struct{}
	_       [32]byte // keep stripes on their own cache lines
}

func newFence() *fence { return &fence{seed: maphash.MakeSeed()} }

func (f *fence) stripe(key []byte) *fenceStripe {
	return &f.stripes[maphash.Bytes(f.seed, key)&(fenceStripes-1)]
}

// begin returns the generation a fill of key must still see to store. A
// read takes it before it reads the in-memory store: a change that lands
// between its miss and its Tier read (a write whose Tier part failed or
// was skipped leaves the Tier's older value there) must stop the fill too.
func (f *fence) begin(key []byte) uint64 {
	return f.stripe(key).gen.Load()
}

// fill runs store if key has not changed since begin returned gen, and
// reports whether it ran.
func (f *fence) fill(key []byte, gen uint64, store func()) bool {
	st := f.stripe(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gen.Load() != gen || len(st.writing) != 0 {
		return false
	}
	store()
	return true
}

// change runs apply (an in-memory change that no Tier write follows: an
// invalidation, or a write whose Tier part is skipped) and then bumps key's
// generation, under the stripe's lock. The bump comes after apply (even if
// it panics): begin reads the generation without the lock, so a read that
// took a generation bumped before apply could still miss the store before
// apply had run, read the Tier's older value, and store it over apply's.
func (f *fence) change(key []byte, apply func()) {
	st := f.stripe(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer st.gen.Add(1)
	apply()
}

// changeAll bumps every stripe's generation, one stripe at a time: a fill
// that began before stores nothing afterwards. Whatever such a fill stored
// before its stripe's bump, the caller removes by clearing the store once
// changeAll has returned.
func (f *fence) changeAll() {
	for i := range f.stripes {
		st := &f.stripes[i]
		st.mu.Lock()
		st.gen.Add(1)
		st.mu.Unlock()
	}
}

// open starts a change of key that a Tier write follows: it bumps key's
// generation and runs apply (the in-memory change) under the stripe's
// lock. The caller must call close(key) once the Tier write has ended.
// open first waits for the key's change in progress, if any, to close.
func (f *fence) open(key []byte, apply func()) {
	st := f.stripe(key)
	st.mu.Lock()
	defer st.mu.Unlock()
	for {
		busy, ok := st.writing[string(key)]
		if !ok {
			break
		}
		st.mu.Unlock()
		<-busy
		st.mu.Lock()
	}
	if st.writing == nil {
		st.writing = make(map[string]chan struct{})
	}
	done := make(chan struct{})
	st.writing[string(key)] = done
	opened := false
	defer func() {
		if !opened { // apply panicked: no close follows
			delete(st.writing, string(key))
			close(done)
		}
	}()
	st.gen.Add(1)
	apply()
	opened = true
}

// close ends a change that open started.
func (f *fence) close(key []byte) {
	st := f.stripe(key)
	st.mu.Lock()
	st.gen.Add(1)
	done := st.writing[string(key)]
	delete(st.writing, string(key))
	st.mu.Unlock()
	close(done)
}
