// Package leaktest checks that a test leaves no goroutine behind.
//
// Call Check at the start of a test:
//
//	func TestServe(t *testing.T) {
//		leaktest.Check(t)
//		…
//	}
//
// It notes the goroutines running then and, once the test and the
// cleanups it registers later are over, fails the test if any goroutine
// started since is still running, with the stacks of those. Goroutines get
// a bounded time to exit, because closing connections and listeners, or
// cancelling a context, ends them asynchronously.
//
// Goroutines are told apart by their ids, not counted, so one that was
// already exiting when the test started cannot hide a leak. A test that
// runs in parallel with others may be blamed for their goroutines: use
// Check in tests that do not call t.Parallel.
//
// The package uses only the standard library, so that the tests of every
// module of the repository can use it.
package leaktest

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Timeout is how long Check waits for goroutines to exit after a test.
const Timeout = 5 * time.Second

// poll is how often the goroutines are listed while waiting.
const poll = 10 * time.Millisecond

// Check fails t if goroutines started during the test are still running
// Timeout after it and its later cleanups are over. Call it first in the
// test, so that its check runs after every cleanup the test registers.
func Check(t testing.TB) {
	t.Helper()
	check(t, Timeout)
}

func check(t testing.TB, timeout time.Duration) {
	before := goroutines()
	t.Cleanup(func() {
		if err := wait(before, timeout); err != nil {
			t.Error(err)
		}
	})
}

// wait waits, for timeout at the most, until no goroutine runs but those
// of before; if some still run then, the error shows their stacks.
func wait(before map[uint64][]byte, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var leaked []uint64
		now := goroutines()
		for id := range now {
			if _, ok := before[id]; !ok {
				leaked = append(leaked, id)
			}
		}
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			slices.Sort(leaked)
			var b bytes.Buffer
			fmt.Fprintf(&b, "%d goroutines before the test, %d after; started during it and still running:\n", len(before), len(now))
			for _, id := range leaked {
				fmt.Fprintf(&b, "\n%s\n", now[id])
			}
			return fmt.Errorf("%s", b.Bytes())
		}
		time.Sleep(poll)
	}
}

// Stacks returns the stacks of every goroutine, as runtime.Stack writes
// them, whatever their size.
func Stacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// goroutines returns the stack of every goroutine by its id.
func goroutines() map[uint64][]byte {
	out := make(map[uint64][]byte)
	for stack := range bytes.SplitSeq(Stacks(), []byte("\n\n")) {
		// Each stack starts "goroutine 42 [chan receive]:".
		rest, ok := bytes.CutPrefix(stack, []byte("goroutine "))
		if !ok {
			continue
		}
		id, _, ok := bytes.Cut(rest, []byte(" "))
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(string(id), 10, 64)
		if err != nil {
			continue
		}
		out[n] = stack
	}
	return out
}
