package leaktest

import (
	"fmt"
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
