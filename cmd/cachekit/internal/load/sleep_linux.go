package load

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// preciseSleeper waits on a timerfd through the runtime's network poller.
// The runtime's own timers fire late by up to about a millisecond when the
// process is otherwise idle (the poller waits in whole milliseconds), which
// an open-loop run would charge to the server as latency; a timerfd wakes
// the poller within microseconds, without holding a thread.
type preciseSleeper struct {
	f    *os.File
	fd   uintptr
	stop func() bool
}

// timerfd_create(2) and timerfd_settime(2) arguments.
const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

type itimerspec struct {
	interval syscall.Timespec
	value    syscall.Timespec
}

// newPreciseSleeper returns a sleeper whose waits end early when ctx is
// done.
func newPreciseSleeper(ctx context.Context) (*preciseSleeper, error) {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil, errno
	}
	s := &preciseSleeper{f: os.NewFile(fd, "timerfd"), fd: fd}
	s.stop = context.AfterFunc(ctx, func() { s.f.SetReadDeadline(time.Unix(1, 0)) })
	return s, nil
}

func (s *preciseSleeper) close() {
	s.stop()
	s.f.Close()
}

// sleepUntil returns once t is reached (true) or ctx is done (false).
func (s *preciseSleeper) sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	spec := itimerspec{value: syscall.NsecToTimespec(int64(d))}
	if _, _, errno := syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, s.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0); errno != 0 {
		return realClock{}.SleepUntil(ctx, t)
	}
	var buf [8]byte
	for {
		_, err := s.f.Read(buf[:])
		switch {
		case err == nil:
			return true
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false
		case errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.EAGAIN):
			continue
		default:
			return realClock{}.SleepUntil(ctx, t)
		}
	}
}
