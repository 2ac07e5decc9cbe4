package leaktest

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"testing"
	"time"
)

// fakeT is a testing.TB whose cleanups run when the test says, and whose
// errors are recorded instead of failing the test.
type fakeT struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (f *fakeT) Helper()           {}
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Error(args ...any) { f.errors = append(f.errors, fmt.Sprint(args...)) }

func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

// finish runs the cleanups last-registered first, as testing does.
func (f *fakeT) finish() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// leakedGoroutine is what the leaked goroutine of TestDetectsLeak runs,
// named so that its stack can be recognized in the error.
func leakedGoroutine(release <-chan struct{}) {
	<-release
}

func TestDetectsLeak(t *testing.T) {
	ft := &fakeT{TB: t}
	check(ft, 50*time.Millisecond)
	release := make(chan struct{})
	defer close(release)
	go leakedGoroutine(release)
	ft.finish() // the goroutine cannot exit before release is closed
	if len(ft.errors) != 1 {
		t.Fatalf("got %d errors for a leaked goroutine, want 1: %q", len(ft.errors), ft.errors)
	}
	if !strings.Contains(ft.errors[0], "leakedGoroutine") {
		t.Errorf("the error does not show the leaked goroutine's stack:\n%s", ft.errors[0])
	}
}

func TestNoLeak(t *testing.T) {
	ft := &fakeT{TB: t}
	check(ft, Timeout)
	stop := make(chan struct{})
	go func() { <-stop }()
	// A cleanup registered after check runs before its check: the
	// goroutine is told to stop there, and exits while the check waits.
	ft.Cleanup(func() { close(stop) })
	ft.finish()
	if len(ft.errors) != 0 {
		t.Errorf("errors without a leak: %q", ft.errors)
	}
}

// TestOlderGoroutinesDoNotCount checks that goroutines running before the
// check, exiting during the test or not, are not taken for leaks, nor hide
// one.
func TestOlderGoroutinesDoNotCount(t *testing.T) {
	old, forever := make(chan struct{}), make(chan struct{})
	defer close(forever)
	go func() { <-old }()
	go func() { <-forever }()
	ft := &fakeT{TB: t}
	check(ft, 50*time.Millisecond)
	close(old)
	ft.finish()
	if len(ft.errors) != 0 {
		t.Errorf("older goroutines were taken for leaks: %q", ft.errors)
	}

	ft = &fakeT{TB: t}
	exiting := make(chan struct{})
	go func() { <-exiting }()
	check(ft, 50*time.Millisecond)
	close(exiting) // one exits, one starts: the count stays the same
	release := make(chan struct{})
	defer close(release)
	go leakedGoroutine(release)
	ft.finish()
	if len(ft.errors) != 1 {
		t.Errorf("got %d errors for a leak while an older goroutine exited, want 1: %q", len(ft.errors), ft.errors)
	}
}

func TestCheck(t *testing.T) {
	Check(t)
	done := make(chan struct{})
	go close(done)
	<-done
}

// fakeM is the testing.M of run's tests: its Run runs a function in place
// of tests and returns its code.
type fakeM func() int

func (f fakeM) Run() int { return f() }

func TestRunReportsLeak(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var stderr bytes.Buffer
	code := run(fakeM(func() int {
		go leakedGoroutine(release)
		return 0
	}), nil, 50*time.Millisecond, &stderr)
	if code != 1 {
		t.Errorf("run returned %d for tests that passed and leaked a goroutine, want 1", code)
	}
	out := stderr.String()
	if !strings.HasPrefix(out, "leaktest: ") || !strings.Contains(out, "leaktest.leakedGoroutine(") {
		t.Errorf("standard error does not report the leaked goroutine with its stack:\n%s", out)
	}
	if n := strings.Count(out, "\ngoroutine "); n != 1 {
		t.Errorf("%d goroutines reported, want 1:\n%s", n, out)
	}
}

func TestRunNoLeak(t *testing.T) {
	var stderr bytes.Buffer
	code := run(fakeM(func() int {
		// It outlives the tests, but not the wait.
		go func() { time.Sleep(50 * time.Millisecond) }()
		return 0
	}), nil, Timeout, &stderr)
	if code != 0 || stderr.Len() != 0 {
		t.Errorf("run returned %d, want 0, for a goroutine that exits soon after the tests; standard error:\n%s", code, stderr.Bytes())
	}
}

// TestRunAfter checks that after runs after the tests and before the
// check, and whatever their result.
func TestRunAfter(t *testing.T) {
	stop := make(chan struct{})
	var order []string
	var stderr bytes.Buffer
	code := run(fakeM(func() int {
		order = append(order, "tests")
		go func() { <-stop }()
		return 0
	}), func() {
		order = append(order, "after")
		close(stop)
	}, Timeout, &stderr) // the goroutine exits once stop is closed: a bound of 50ms would race with it
	if code != 0 || stderr.Len() != 0 {
		t.Errorf("run returned %d, want 0, for a goroutine that after stops; standard error:\n%s", code, stderr.Bytes())
	}
	if got := strings.Join(order, ", "); got != "tests, after" {
		t.Errorf("ran %s, want tests, after", got)
	}

	release := make(chan struct{})
	defer close(release)
	afterRan := false
	code = run(fakeM(func() int {
		go leakedGoroutine(release)
		return 0
	}), func() { afterRan = true }, 50*time.Millisecond, &stderr)
	if code != 1 || !afterRan {
		t.Errorf("with an after that stops nothing, run returned %d (want 1) and ran after: %v", code, afterRan)
	}
}

// TestRunFailedTests checks that the code of tests that failed is kept,
// with no check.
func TestRunFailedTests(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	afterRan := false
	var stderr bytes.Buffer
	start := time.Now()
	code := run(fakeM(func() int {
		go leakedGoroutine(release)
		return 3
	}), func() { afterRan = true }, Timeout, &stderr)
	if code != 3 || !afterRan || stderr.Len() != 0 {
		t.Errorf("for failed tests run returned %d (want 3), ran after: %v (want true), wrote:\n%s", code, afterRan, stderr.Bytes())
	}
	if d := time.Since(start); d >= Timeout {
		t.Errorf("run waited %v for the goroutines of failed tests", d)
	}
}

// TestRunOlderGoroutinesDoNotCount checks that goroutines running before
// the tests, exiting during them or not, are not taken for leaks, nor hide
// one.
func TestRunOlderGoroutinesDoNotCount(t *testing.T) {
	forever := make(chan struct{})
	defer close(forever)
	go func() { <-forever }()
	exiting := make(chan struct{})
	go func() { <-exiting }()
	var stderr bytes.Buffer
	code := run(fakeM(func() int {
		close(exiting)
		return 0
	}), nil, 50*time.Millisecond, &stderr)
	if code != 0 {
		t.Errorf("older goroutines were taken for leaks:\n%s", stderr.Bytes())
	}

	exiting2 := make(chan struct{})
	go func() { <-exiting2 }()
	release := make(chan struct{})
	defer close(release)
	code = run(fakeM(func() int {
		close(exiting2) // one exits, one starts: the count stays the same
		go leakedGoroutine(release)
		return 0
	}), nil, 50*time.Millisecond, &stderr)
	if code != 1 {
		t.Errorf("run returned %d for a leak while an older goroutine exited, want 1", code)
	}
}

// TestRunIgnoresSignalLoop checks that the goroutine signal.Notify starts
// for good is not taken for a leak, and hides none.
func TestRunIgnoresSignalLoop(t *testing.T) {
	for _, stack := range goroutines() {
		if entry(stack) == "os/signal.loop" {
			t.Skipf("signal.Notify was called before the test: its goroutine runs already\n%s", stack)
		}
	}
	var stderr bytes.Buffer
	code := run(fakeM(func() int {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		signal.Stop(c)
		return 0
	}), nil, 50*time.Millisecond, &stderr)
	if code != 0 {
		t.Errorf("the goroutine of signal.Notify was taken for a leak:\n%s", stderr.Bytes())
	}
	started := false
	for _, stack := range goroutines() {
		started = started || entry(stack) == "os/signal.loop"
	}
	if !started {
		t.Error("signal.Notify started no os/signal.loop goroutine: expected is out of date")
	}
}

func TestEntry(t *testing.T) {
	for _, tt := range []struct{ stack, want string }{
		{`goroutine 20 [syscall]:
os/signal.signal_recv()
	/usr/local/go/src/runtime/sigqueue.go:152 +0x98
os/signal.loop()
	/usr/local/go/src/os/signal/signal_unix.go:23 +0x13
created by os/signal.Notify.func1.1 in goroutine 1
	/usr/local/go/src/os/signal/signal.go:152 +0x1f`, "os/signal.loop"},
		// A goroutine that calls os/signal.loop is not its goroutine.
		{`goroutine 21 [syscall]:
os/signal.loop()
	/usr/local/go/src/os/signal/signal_unix.go:23 +0x13
example.com/p.leak(0xc000012345, {0x1, 0x2})
	/src/p/p.go:10 +0x20
created by example.com/p.Start in goroutine 1
	/src/p/p.go:5 +0x30`, "example.com/p.leak"},
		{`goroutine 22 [select]:
example.com/p.(*Cache[...]).run(0xc000100000)
	/src/p/cache.go:40 +0x50
created by example.com/p.New[...] in goroutine 7
	/src/p/cache.go:20 +0x60`, "example.com/p.(*Cache[...]).run"},
		{`goroutine 23 [chan receive]:
example.com/p.deep(...)
	/src/p/p.go:3
...additional frames elided...
example.com/p.Start.func1()
	/src/p/p.go:7 +0x10
created by example.com/p.Start in goroutine 1
	/src/p/p.go:6 +0x20`, "example.com/p.Start.func1"},
		{`goroutine 1 [running]:
main.main()
	/src/main.go:17 +0x9c`, "main.main"},
		{`goroutine 24 [running]:`, ""},
	} {
		if got := entry([]byte(tt.stack)); got != tt.want {
			t.Errorf("entry of\n%s\n= %q, want %q", tt.stack, got, tt.want)
		}
	}
}
