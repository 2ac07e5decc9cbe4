package cachekit

import (
	"sync/atomic"
	"testing"
	"time"
)

// The cached clock stood still while the background goroutine ran a
// maintenance pass, for as long as the pass took, so Get and Peek returned
// entries long past their TTL meanwhile (Options.Clock: with the default
// clock "the cache sees an entry expire up to about a millisecond after
// its deadline"). maintainFromBackground let readers take the time
// themselves while it dropped victims and ran callbacks, and while it
// waited for the lock, but not during passLocked. A pass can be long: a
// writer whose TryLock failed leaves its record to the next pass, and a
// pass that evicts for it runs the policy's eviction loop under c.mu (a
// weighted "lru" cache of 2^20 entries of weight 1 given one entry of its
// whole MaxWeight held the lock ~0.5 s). Here the pass is held inside the
// policy's hashing (the test hook setHasher) to make its length
// deterministic: a 1 ms entry written while the background pass runs must
// be expired 50 ms later.
func TestBackgroundPassKeepsTheClockRunning(t *testing.T) {
	const blockKey, ttlKey = 7, 8
	var armed atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	c := Must(Options[int, int]{MaxEntries: 100})
	c.setHasher(func(k int) uint64 {
		if k == blockKey && armed.CompareAndSwap(true, false) {
			close(entered) // the pass holds c.mu: a long pass, as above
			<-release
		}
		return hashInt(uint64(k), 0x5eed)
	})
	defer c.Close()
	defer close(release)

	// A write whose writer finds the maintenance lock taken (another
	// goroutine's pass) leaves its record for the next pass, which the
	// background goroutine runs.
	c.c.mu.Lock()
	c.Set(blockKey, 1)
	c.c.mu.Unlock()
	armed.Store(true)
	select {
	case <-entered:
	case <-time.After(4 * time.Second):
		t.Fatal("the background goroutine ran no pass")
	}

	// The background goroutine is inside its pass. An entry with a 1 ms TTL:
	if !c.SetWithTTL(ttlKey, 42, time.Millisecond) {
		t.Fatal("SetWithTTL refused")
	}
	written := time.Now()
	time.Sleep(50 * time.Millisecond)
	if v, ok := c.Get(ttlKey); ok {
		t.Errorf("Get(%d) = %d, true %v after a SetWithTTL of 1ms: the cached clock stood still during the background pass", ttlKey, v, time.Since(written).Round(time.Millisecond))
	}
	if v, ok := c.Peek(ttlKey); ok {
		t.Errorf("Peek(%d) = %d, true %v after a SetWithTTL of 1ms", ttlKey, v, time.Since(written).Round(time.Millisecond))
	}
}
