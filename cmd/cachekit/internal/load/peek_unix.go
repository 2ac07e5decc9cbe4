//go:build unix

package load

import (
	"net"
	"syscall"
	"time"
)

// peerClosed reports whether c's peer has closed it, or sent something no
// request asked for (c cannot be reused then either), without waiting: a
// peek at the socket's receive queue. It clears c's read deadline (the last
// request's, which may have passed: the runtime would refuse the peek).
func peerClosed(c net.Conn) bool {
	if c.SetReadDeadline(time.Time{}) != nil {
		return true
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// n == 0 without an error is the end of the stream; n > 0 an
		// answer nobody asked for; EAGAIN an open, quiet connection.
		closed = n >= 0 && err == nil || err != nil && err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR
		return true // done: never wait for readiness
	})
	return err != nil || closed
}
