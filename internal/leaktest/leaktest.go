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
// Main does the same for a whole test binary, parallel tests included:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
//
// Once the tests have passed, it fails the binary if goroutines started
// since it began are still running Timeout later. A package whose tests
// share servers or other long-lived state stops them first, with Run:
//
//	func TestMain(m *testing.M) { os.Exit(leaktest.Run(m, stopServers)) }
//
// Both checks ignore the few goroutines that the standard library starts
// on a test's behalf and never stops, by design (see expected).
//
// The package uses only the standard library, so that the tests of every
// module of the repository can use it.
package leaktest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Timeout is how long Check and Main wait for goroutines to exit after a
// test, or after all the tests.
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
		if leaked, now := wait(before, timeout); len(leaked) > 0 {
			t.Errorf("%d goroutines before the test, %d after; started during it and still running:\n%s",
				len(before), now, bytes.Join(leaked, nil))
		}
	})
}

// Main runs the tests of m and exits: with their exit code if they failed;
// otherwise with 1 if goroutines started since Main was called (by the
// tests, or by the testing package on their behalf) are still running
// Timeout after the tests, with their stacks on standard error, and with 0
// if none is. Call it from TestMain:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
//
// The check needs no goroutine of the tests to be running after m.Run:
// tests that share servers or other long-lived state stop them in Run's
// after function instead.
func Main(m *testing.M) {
	os.Exit(Run(m, nil))
}

// Run is Main for a TestMain that has something to do after the tests and
// before the check, such as stopping servers the tests share, and that
// exits itself: it runs the tests of m, then after (if not nil), then, if
// the tests passed, the check of Main, and returns the code to exit with.
//
//	func TestMain(m *testing.M) { os.Exit(leaktest.Run(m, stopServers)) }
func Run(m *testing.M, after func()) int {
	return run(m, after, Timeout, os.Stderr)
}

// runner is what run needs of a testing.M, so that its tests can give it
// a fake one.
type runner interface{ Run() int }

func run(m runner, after func(), timeout time.Duration, stderr io.Writer) int {
	before := goroutines()
	code := m.Run()
	if after != nil {
		after()
	}
	if code != 0 {
		// The tests failed already, and may well have left goroutines
		// behind because of it: their failures are the news.
		return code
	}
	leaked, now := wait(before, timeout)
	if len(leaked) == 0 {
		return 0
	}
	fmt.Fprintf(stderr, "leaktest: the tests passed, but %d goroutines started during them are still running %v after them "+
		"(%d goroutines before the tests, %d after):\n%s",
		len(leaked), timeout, len(before), now, bytes.Join(leaked, nil))
	return 1
}

// wait waits, for timeout at the most, until no goroutine runs but those
// of before and expected ones. It returns the stacks of the others still
// running then, each preceded by an empty line and in the order they
// started, and the number of goroutines running.
func wait(before map[uint64][]byte, timeout time.Duration) (leaked [][]byte, running int) {
	deadline := time.Now().Add(timeout)
	for {
		var ids []uint64
		now := goroutines()
		for id, stack := range now {
			if _, ok := before[id]; !ok && !expected[entry(stack)] {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil, len(now)
		}
		if time.Now().After(deadline) {
			slices.Sort(ids)
			for _, id := range ids {
				leaked = append(leaked, fmt.Appendf(nil, "\n%s\n", now[id]))
			}
			return leaked, len(now)
		}
		time.Sleep(poll)
	}
}

// expected holds the functions that goroutines which are no leak start
// with: goroutines that a package of the standard library starts on a
// test's behalf, once per process, and never stops, by design. A goroutine
// is ignored if the function it was started with (the outermost frame of
// its stack, see entry) is one of these, exactly; the other frames do not
// count, so a goroutine of the tests that merely calls one of these is
// still seen.
//
// Nothing else needs ignoring:
//   - the testing package leaves no goroutine behind m.Run: its tests and
//     benchmarks run in goroutines that end with them (one may still be
//     returning when m.Run does, which the wait covers), and its -timeout
//     alarm is a time.AfterFunc, whose goroutine starts only when it fires,
//     to panic; the profile and trace writers of -cpuprofile and -trace
//     are stopped before m.Run returns;
//   - runtime.Stack does not show the runtime's own goroutines (the
//     garbage collector's, the finalizer and cleanup goroutines, the one
//     that signal.Notify adds to keep a thread for signals), except while
//     one runs a finalizer or cleanup of the program, which the wait also
//     covers.
var expected = map[string]bool{
	// signal.Notify, and so signal.NotifyContext, starts the goroutine
	// that hands signals to the channels on its first call; signal.Stop
	// and signal.Reset leave it running (see signal_unix.go). A test that
	// runs in process a command calling it (cachekit serve and load do)
	// starts it.
	"os/signal.loop": true,
}

// entry returns the name of the function a goroutine was started with: the
// outermost function of its stack, as runtime.Stack writes it, without the
// arguments. Its frames are pairs of lines, the function and its arguments
// ("pkg.(*T).Method(0x1, ...)") and then, indented by a tab, its file and
// line; "created by" and its own file line end the stack. It returns "" for
// a stack it cannot read.
func entry(stack []byte) string {
	var fn []byte
	for i, line := range bytes.Split(stack, []byte("\n")) {
		if i == 0 || len(line) == 0 || line[0] == '\t' {
			continue // the goroutine's header, or a frame's file and line
		}
		if bytes.HasPrefix(line, []byte("created by ")) {
			break
		}
		if bytes.HasPrefix(line, []byte("...")) {
			continue // "...additional frames elided..." in a deep stack
		}
		fn = line
	}
	if i := bytes.LastIndexByte(fn, '('); i > 0 {
		return string(fn[:i])
	}
	return ""
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
